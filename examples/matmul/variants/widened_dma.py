"""matmul variant: the baseline after the builtin `widen_dma` and `batch_psum_evictions` rewrites: the four
[128, 128] rhs strips of a K step arrive in one [128, 512] DMA, and each output tile is evicted from PSUM and
stored once ([128, 512]) instead of four times. The matmuls still run on 128-column strips."""
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
                b_wide = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:n * 512 + 512])
                for j in nl.affine_range(4):
                    res_psum[:, j * 128:(j + 1) * 128] += nisa.nc_matmul(a_tile, b_wide[:, j * 128:(j + 1) * 128])
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * 128:(m + 1) * 128, n * 512:n * 512 + 512], value=res_sb)
    return result
