"""SiLU baseline (a test fixture of our own): sigmoid on ACT, then the product on DVE, in [128, 512] tiles."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            x_tile = nl.load(x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            y = nl.multiply(x_tile, nl.sigmoid(x_tile))
            nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=y)
    return out
