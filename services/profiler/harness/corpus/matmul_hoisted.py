"""Matmul tutorial step 2 (our own kernel): loads hoisted. The lhsT column of tiles is loaded once per m, the
rhs column once per (m, n), outside the K loop. result = lhsT.T @ rhs."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhsT, rhs):
    K, M = lhsT.shape
    N = rhs.shape[1]
    KT = K // 128
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        a = nl.ndarray((KT, nl.par_dim(128), 128), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            a[k] = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        for n in nl.affine_range(N // 512):
            b = nl.ndarray((KT, nl.par_dim(128), 512), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                b[k] = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                acc += nl.matmul(a[k], b[k], transpose_x=True)
            nl.store(result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=result.dtype))
    return result
