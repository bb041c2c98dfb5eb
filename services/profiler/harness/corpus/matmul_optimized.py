"""Matmul tutorial step 4 (our own kernel): fully optimized. Larger free-dimension blocks, the K dimension
blocked too, partial sums accumulated in SBUF and each output block stored once. result = lhsT.T @ rhs."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

BM = 4      # 128-row output tiles per M block
BN = 4      # 512-column output tiles per N block
BK = 8      # 128-deep K tiles per K block


@nki.jit
def kernel(lhsT, rhs):
    K, M = lhsT.shape
    N = rhs.shape[1]
    bm = min(BM, M // 128)
    bn = min(BN, N // 512)
    bk = min(BK, K // 128)
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for nb in nl.affine_range(N // (512 * bn)):
        out = nl.zeros((M // 128, nl.par_dim(128), 512 * bn), dtype=nl.float32, buffer=nl.sbuf)
        for kb in nl.sequential_range(K // (128 * bk)):
            b = nl.ndarray((bk, nl.par_dim(128), 512 * bn), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(bk):
                kk = kb * bk + k
                b[k] = nl.load(rhs[kk * 128:(kk + 1) * 128, nb * 512 * bn:(nb + 1) * 512 * bn])
            for mb in nl.affine_range(M // (128 * bm)):
                a = nl.ndarray((bk, nl.par_dim(128), 128 * bm), dtype=lhsT.dtype, buffer=nl.sbuf)
                for k in nl.affine_range(bk):
                    kk = kb * bk + k
                    a[k] = nl.load(lhsT[kk * 128:(kk + 1) * 128, mb * 128 * bm:(mb + 1) * 128 * bm])
                for i in nl.affine_range(bm):
                    for j in nl.affine_range(bn):
                        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                        for k in nl.affine_range(bk):
                            acc += nl.matmul(a[k, :, i * 128:(i + 1) * 128], b[k, :, j * 512:(j + 1) * 512],
                                             transpose_x=True)
                        out[mb * bm + i, :, j * 512:(j + 1) * 512] = nl.add(
                            out[mb * bm + i, :, j * 512:(j + 1) * 512], acc)
        for mt in nl.affine_range(M // 128):
            nl.store(result[mt * 128:(mt + 1) * 128, nb * 512 * bn:(nb + 1) * 512 * bn],
                     value=nl.copy(out[mt], dtype=result.dtype))
    return result
