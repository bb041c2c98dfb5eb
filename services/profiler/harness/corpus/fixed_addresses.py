"""NKI Beta 2 direct placement: tensors declared at fixed addresses with `nl.ndarray(..., address=(partition,
byte offset))`, one PSUM tensor spanning two banks (Beta 2 has no block dimensions, so a tensor larger than a bank
is how several banks are held), filled bank by bank by matmuls inside `with nl.no_reorder():` and read back by one
instruction over both banks. out = (a_t.T @ b) * 2 for a_t [128, 128], b [128, 1024]."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a_t, b):
    k, m = a_t.shape
    n = b.shape[1]
    bank = nl.tile_size.psum_bank_fmax                   # fp32 elements of one PSUM bank per partition
    assert n // bank <= nl.tile_size.psum_num_banks
    out = nl.ndarray((m, n), dtype=a_t.dtype, buffer=nl.shared_hbm)
    lhs = nl.ndarray((k, m), dtype=a_t.dtype, buffer=nl.sbuf, address=(0, 0))
    rhs = nl.ndarray((k, n), dtype=b.dtype, buffer=nl.sbuf, address=(0, m * 4))
    res = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf, address=(0, (m + n) * 4))
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum, address=(0, 0))     # n // bank banks
    nisa.dma_copy(dst=lhs, src=a_t)
    nisa.dma_copy(dst=rhs, src=b)
    with nl.no_reorder():
        for j in nl.sequential_range(n // bank):
            nisa.nc_matmul(dst=acc[:, nl.ds(j * bank, bank)], stationary=lhs, moving=rhs[:, nl.ds(j * bank, bank)],
                           accumulate=False)
    nisa.tensor_scalar(dst=res, data=acc, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=res)
    return out
