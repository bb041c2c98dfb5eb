"""Matmul tutorial step 3 (our own kernel): blocked free dimensions. An rhs block of BN tiles is loaded once
and reused by every lhsT block of BM tiles. result = lhsT.T @ rhs."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

BM = 2      # 128-row output tiles per M block
BN = 2      # 512-column output tiles per N block


@nki.jit
def kernel(lhsT, rhs):
    K, M = lhsT.shape
    N = rhs.shape[1]
    KT = K // 128
    bm = min(BM, M // 128)
    bn = min(BN, N // 512)
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for nb in nl.affine_range(N // (512 * bn)):
        b = nl.ndarray((KT, nl.par_dim(128), 512 * bn), dtype=rhs.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            b[k] = nl.load(rhs[k * 128:(k + 1) * 128, nb * 512 * bn:(nb + 1) * 512 * bn])
        for mb in nl.affine_range(M // (128 * bm)):
            a = nl.ndarray((KT, nl.par_dim(128), 128 * bm), dtype=lhsT.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                a[k] = nl.load(lhsT[k * 128:(k + 1) * 128, mb * 128 * bm:(mb + 1) * 128 * bm])
            for i in nl.affine_range(bm):
                for j in nl.affine_range(bn):
                    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        acc += nl.matmul(a[k, :, i * 128:(i + 1) * 128], b[k, :, j * 512:(j + 1) * 512],
                                         transpose_x=True)
                    row = (mb * bm + i) * 128
                    col = (nb * bn + j) * 512
                    nl.store(result[row:row + 128, col:col + 512], value=nl.copy(acc, dtype=result.dtype))
    return result
