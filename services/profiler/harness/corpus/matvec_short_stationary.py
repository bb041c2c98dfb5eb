"""Performance-guide Opt #7, before (our own kernel): token-by-token vector-matrix products y[r] = x[:, r].T @ w
with the vector as the stationary operand ([128, 1]) and 128-column blocks of w as the moving one. x [128, R],
w [128, N]; out [R, N]."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x, w):
    tokens = x.shape[1]
    n = w.shape[1]
    out = nl.ndarray((tokens, n), dtype=nl.float32, buffer=nl.shared_hbm)
    weights = nl.load(w)
    for r in nl.affine_range(tokens):
        vector = nl.load(x[:, r:r + 1])
        for g in nl.affine_range(n // 512):
            row = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.psum)
            for j in nl.affine_range(4):
                c = g * 512 + j * 128
                row[:, j * 128:(j + 1) * 128] = nisa.nc_matmul(vector, weights[:, c:c + 128])
            nl.store(out[r:r + 1, g * 512:(g + 1) * 512], value=nl.copy(row, dtype=np.float32))
    return out
