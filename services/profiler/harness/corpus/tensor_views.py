"""NKI 0.6 tensor views and element selection (`import nki`): permute / select / expand_dim / broadcast views (no
instruction), tensor indirection (`data.indirect(idx_tile, num_elem)`: a per-partition gather on the vector
engine), nl.gather_flattened, nl.shared_identity_matrix feeding an identity matmul, and the Beta 2 positional form
of nisa.nc_stream_shuffle (dst, src, mask: partitions reversed within each quadrant of 32).
x [2, 128, 48], cols [16] (column ids) -> picked[p, j] = x[0, p, cols[j]] + x[1, p, 2 j], moved[p, c, b] = x[b, p, c],
shuffled[p] = picked[32 (p // 32) + 31 - p % 32]."""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, cols):
    b, p, c = x.shape
    n = cols.shape[0]
    picked_out = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
    moved_out = nl.ndarray((p, c, b), dtype=x.dtype, buffer=nl.shared_hbm)

    staged = nl.ndarray((p, b, c), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=staged, src=x.permute([1, 0, 2]))
    moved = nl.ndarray((p, c, b), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=moved, src=staged.permute([0, 2, 1]))
    nisa.dma_copy(dst=moved_out, src=moved)

    # cols as a [16, 1] column, moved onto the free axis of 16 partitions, then repeated for every group of 16
    col_ids = nl.ndarray((n, 1), dtype=nl.uint16, buffer=nl.sbuf)
    nisa.dma_copy(dst=col_ids, src=cols.expand_dim(1))
    offsets = nl.ndarray((p, 1), dtype=nl.uint16, buffer=nl.sbuf)
    for g in nl.static_range(p // 16):
        nisa.dma_copy(dst=offsets[16 * g:16 * (g + 1), :], src=col_ids)
    first = nl.ndarray((p, c), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=first, src=staged.select(1, 0))
    gathered = first.indirect(offsets, num_elem=n)

    evens = nl.ndarray((p, n), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.iota(dst=evens, pattern=[[2, n]], offset=0, channel_multiplier=0)
    second = nl.gather_flattened(staged.select(1, 1), evens)

    identity = nl.shared_identity_matrix(p, dtype=x.dtype)
    total = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=total, data1=gathered, data2=second, op=nl.add)
    product = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=product, stationary=identity, moving=total)
    result = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=result, src=product)
    nisa.dma_copy(dst=picked_out, src=result)
    shuffled_out = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
    shuffled = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_stream_shuffle(shuffled, result, [31 - i for i in range(32)])
    nisa.dma_copy(dst=shuffled_out, src=shuffled)
    return picked_out, moved_out, shuffled_out
