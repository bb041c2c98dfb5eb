"""Baseline row softmax kernel, float32: one [128, N] row tile at a time.

max on DVE, x - max as a separate subtraction, exp on ACT, sum on DVE, reciprocal, then the normalising
multiply; every step is its own instruction over the full row tile.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        row_max = nl.max(x_tile, axis=[1])
        shifted = nl.subtract(x_tile, row_max)
        e = nl.exp(shifted)
        row_sum = nl.sum(e, axis=[1])
        inv = nisa.reciprocal(row_sum)
        y = nl.multiply(e, inv)
        nl.store(out[i * 128:(i + 1) * 128, :], value=y)
    return out
