"""Paged blocks, Beta 1 style: a block table names which [32, 64] blocks of a cache form the rows of the output
(as a paged KV cache does). One block id read from SBUF is a dynamic start address:
`nl.load(cache[ids[j, 0], :, :])` is the whole block at that id, a [32, 64] tile (the block dimension is indexed
like an integer). Each block is scaled by a weight row broadcast to every partition (`nl.broadcast_to` of the
loaded row), and rows past the valid count are zeroed with a comparison of indices as nl.where's condition.
out[j*32 + b] = cache[table[j], b] * w for rows below n_valid, 0 after."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(cache, table, w, n_valid):
    n_blocks, block, d = cache.shape
    n_table = table.shape[0]
    out = nl.ndarray((n_table * block, d), dtype=cache.dtype, buffer=nl.shared_hbm)

    ids = nl.load(table.reshape((n_table, 1)))              # one block id per partition, in SBUF
    w_row = nl.load(w)                                      # [1, d]
    w_tile = nl.broadcast_to(w_row, shape=(block, d))       # the row on every partition of a block
    i_p = nl.arange(block)[:, None]

    for j in nl.affine_range(n_table):
        rows = nl.load(cache[ids[j, 0], :, :])              # the block at the id: [block, d]
        scaled = nl.multiply(rows, w_tile)
        kept = nl.where(j * block + i_p < n_valid, scaled, 0.0)
        nl.store(out[j * block:(j + 1) * block, :], value=kept)
    return out
