"""Partition moves on chip (Beta 2): a block cyclic shift of partitions as a matmul by a shift matrix built from the
shared identity matrix through its own access pattern (`ident.get_pattern()` gives `.ap()`'s [step, count] pairs;
the first steps over partitions), then a copy of 27 partitions between unaligned partition ranges (an engine access
of at most 32 partitions may start at any partition). out = the rows of x shifted down by 8 within each block of
64 rows (cyclically), then rows 40..66 replaced by x's rows 3..29; x [128, 96]."""
import nki
import nki.isa as nisa
import nki.language as nl

BLOCK, SHIFT = 64, 8


@nki.jit
def kernel(x):
    n, width = x.shape
    nblocks = n // BLOCK
    out = nl.ndarray((n, width), dtype=x.dtype, buffer=nl.shared_hbm)
    x_sb = nl.ndarray((n, width), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x)

    # shift[p, b * BLOCK + j] = 1 where p = b * BLOCK + (j - SHIFT) % BLOCK: stationary.T @ x moves row p to
    # row p + SHIFT within its block
    ident = nl.shared_identity_matrix(n, dtype=nl.float32)
    step = ident.get_pattern()[0][0]
    shift = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.sbuf)
    blocks = shift.reshape((n, nblocks, BLOCK))
    nisa.tensor_copy(dst=blocks[:, :, SHIFT:BLOCK],
                     src=ident.ap(pattern=[[step, n], [BLOCK, nblocks], [1, BLOCK - SHIFT]], offset=0))
    nisa.tensor_copy(dst=blocks[:, :, 0:SHIFT],
                     src=ident.ap(pattern=[[step, n], [BLOCK, nblocks], [1, SHIFT]], offset=BLOCK - SHIFT))
    moved = nl.ndarray((n, width), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=moved, stationary=shift, moving=x_sb)
    res = nl.ndarray((n, width), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=moved)

    nisa.tensor_copy(dst=res[40:67, :], src=x_sb[3:30, :])
    nisa.dma_copy(dst=out, src=res)
    return out
