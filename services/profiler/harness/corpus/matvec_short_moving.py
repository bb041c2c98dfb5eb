"""Performance-guide Opt #7, after (our own kernel): the products of matvec_short_stationary.py with the operands
swapped: 128-column blocks of w stationary, the vector moving ([128, 1]), so each matmul yields a column of the
transposed result (fast LoadStationary; the guide: an MM about every 64 cycles instead of every 128). The output
keeps that layout: out[r, p, j] = y[r, 128 j + p], out [R, 128, N / 128]."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x, w):
    tokens = x.shape[1]
    blocks = w.shape[1] // 128
    out = nl.ndarray((tokens, 128, blocks), dtype=nl.float32, buffer=nl.shared_hbm)
    weights = nl.load(w)
    for r in nl.affine_range(tokens):
        vector = nl.load(x[:, r:r + 1])
        columns = nl.ndarray((128, blocks), dtype=nl.float32, buffer=nl.psum)
        for j in nl.affine_range(blocks):
            columns[:, j:j + 1] = nisa.nc_matmul(weights[:, j * 128:(j + 1) * 128], vector)
        nl.store(out[r], value=nl.copy(columns, dtype=np.float32))
    return out
