"""SPMD over two NeuronCores (our own kernel, in the style of the NKI multiple-core SPMD tutorial): the entry
launches `matmul_rows[nl.nc(2)]`, so program p computes output rows [p * M/2, (p + 1) * M/2) on core p;
`kernel_one_core` launches the same two programs as `[2]`, both on one core. result = lhsT.T @ rhs."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_rows(lhsT, rhs, result):
    p = nl.program_id(0)
    K, M = lhsT.shape
    N = rhs.shape[1]
    KT = K // 128
    rows = M // nl.num_programs(0)
    for n in nl.affine_range(N // 512):
        b = nl.ndarray((KT, nl.par_dim(128), 512), dtype=rhs.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            b[k] = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
        for m in nl.affine_range(rows // 128):
            row = p * rows + m * 128
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                a = nl.load(lhsT[k * 128:(k + 1) * 128, row:row + 128])
                acc += nl.matmul(a, b[k], transpose_x=True)
            nl.store(result[row:row + 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=result.dtype))


@nki.jit
def kernel(lhsT, rhs):
    result = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    matmul_rows[nl.nc(2)](lhsT, rhs, result)
    return result


@nki.jit
def kernel_one_core(lhsT, rhs):
    result = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    matmul_rows[2](lhsT, rhs, result)
    return result
