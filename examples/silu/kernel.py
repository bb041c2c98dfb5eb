"""Baseline SiLU kernel: y = x * sigmoid(x), float32.

Tiles of [128, 512]: sigmoid on the scalar engine (ACT), then the product x * sigmoid(x) as a tensor-tensor
multiply on the vector engine (DVE).
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            x_tile = nl.load(x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            sig = nl.sigmoid(x_tile)
            y = nl.multiply(x_tile, sig)
            nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=y)
    return out
