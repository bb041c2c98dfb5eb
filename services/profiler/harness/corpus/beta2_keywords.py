"""NKI Beta 2 memory keywords and affine_range as a plain loop: tensors declared with `sbuf.view(dtype, shape)`,
`psum.view(...)`, `hbm.view(...)` (names the NKI compiler provides without an import), and one staging tile
declared outside an nl.affine_range loop that every iteration rewrites (allowed in Beta 2, where affine_range is
an alias of range). out = (x @ w) * 0.5 for x [256, 128] (two row tiles), w [128, 192]."""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, w):
    rows, k = x.shape
    n = w.shape[1]
    out = hbm.view(dtype=x.dtype, shape=(rows, n))
    weights = sbuf.view(dtype=w.dtype, shape=(k, n))
    nisa.dma_copy(dst=weights, src=w)
    staging = sbuf.view(dtype=x.dtype, shape=(128, k))        # rewritten by every iteration below
    for t in nl.affine_range(rows // 128):
        nisa.dma_copy(dst=staging, src=x[t * 128:(t + 1) * 128, :])
        x_t = psum.view(dtype=nl.float32, shape=(k, 128))
        nisa.nc_transpose(dst=x_t, data=staging)
        lhs = sbuf.view(dtype=nl.float32, shape=(k, 128))
        nisa.tensor_copy(dst=lhs, src=x_t)
        acc = psum.view(dtype=nl.float32, shape=(128, n))
        nisa.nc_matmul(dst=acc, stationary=lhs, moving=weights)
        res = sbuf.view(dtype=x.dtype, shape=(128, n))
        nisa.tensor_scalar(dst=res, data=acc, op0=nl.multiply, operand0=0.5)
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=res)
    return out
