"""Vector dynamic access (Beta 2 `.ap(..., vector_offset=idx, indirect_dim=0)`): a DMA that gathers or scatters
HBM rows through an SBUF tile of row ids, one id per partition. Element [w, j] of the access is element
`offset + idx[w] * (row length) + j` of the tensor: the step of the pattern's first pair is not used.
picked[i, :] = table[ids[i], 16:80] * 2 for table [300, 96], ids [100]; out = table, then
out[ids[i], 16:80] += 1 (ids unique)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(table, ids):
    rows, width = table.shape
    n = ids.shape[0]
    picked = nl.ndarray((n, 64), dtype=table.dtype, buffer=nl.shared_hbm)
    out = nl.ndarray((rows, width), dtype=table.dtype, buffer=nl.shared_hbm)

    ids_sb = nl.ndarray((n, 1), dtype=ids.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ids_sb, src=ids.ap(pattern=[[1, n], [1, 1]], offset=0))

    gathered = nl.ndarray((n, 64), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=gathered, src=table.ap(pattern=[[width, n], [1, 64]], offset=16,
                                             vector_offset=ids_sb, indirect_dim=0))
    doubled = nl.ndarray((n, 64), dtype=table.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=doubled, data=gathered, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=picked, src=doubled)

    for t in nl.affine_range((rows + 127) // 128):        # out = table
        here = min(128, rows - t * 128)
        staged = nl.ndarray((128, width), dtype=table.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=staged[0:here, :], src=table[t * 128:t * 128 + here, :])
        nisa.dma_copy(dst=out[t * 128:t * 128 + here, :], src=staged[0:here, :])
    plus_one = nl.ndarray((n, 64), dtype=table.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=plus_one, data=gathered, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out.ap(pattern=[[width, n], [1, 64]], offset=16, vector_offset=ids_sb, indirect_dim=0),
                  src=plus_one)                            # scatter the rows back, one per id
    return picked, out
