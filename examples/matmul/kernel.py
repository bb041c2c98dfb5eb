"""Baseline matmul kernel: result[M, N] = lhsT.T @ rhs, float32.

Each [128, 512] output tile is accumulated in one PSUM tile over K (128 rows per step), computed as four
[128, 128] column strips: the rhs strips are loaded one by one with narrow [128, 128] DMAs and each strip is
evicted from PSUM and stored on its own.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            res_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a_tile = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                for j in nl.affine_range(4):
                    b_tile = nl.load(rhs[k * 128:(k + 1) * 128, n * 512 + j * 128:n * 512 + (j + 1) * 128])
                    res_psum[:, j * 128:(j + 1) * 128] += nisa.nc_matmul(a_tile, b_tile)
            for j in nl.affine_range(4):
                res_sb = nl.copy(res_psum[:, j * 128:(j + 1) * 128], dtype=result.dtype)
                nl.store(result[m * 128:(m + 1) * 128, n * 512 + j * 128:n * 512 + (j + 1) * 128], value=res_sb)
    return result
