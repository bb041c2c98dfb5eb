"""NKI Beta 2 destination passing (`import nki`): dma_copy into SBUF tiles, nc_matmul(dst=psum) accumulating over
K, tensor_copy and activation writing their dst, the positional form nisa.tensor_tensor(dst, a, b, op).
out = relu(a_t.T @ b) for a_t [256, 128], b [256, 512]."""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a_t, b):
    k, m = a_t.shape
    n = b.shape[1]
    out = nl.ndarray((m, n), dtype=a_t.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(k // 128):
        lhs = nl.ndarray((128, m), dtype=a_t.dtype, buffer=nl.sbuf)
        rhs = nl.ndarray((128, n), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs, src=a_t[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=rhs, src=b[i * 128:(i + 1) * 128, :])
        nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
    copied = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=copied, src=acc)
    zeros = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=zeros, value=0.0)
    result = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(result, copied, zeros, nl.maximum)
    final = nl.ndarray((m, n), dtype=a_t.dtype, buffer=nl.sbuf)
    nisa.activation(dst=final, op=nl.copy, data=result)
    nisa.dma_copy(dst=out, src=final)
    return out
