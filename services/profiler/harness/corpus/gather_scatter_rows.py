"""Indirect DMA, Beta 1 style: an embedding lookup gathers table rows through a tile of row ids
(`nl.load(table[ids_tile[i_p, 0], i_f])`), and a scatter writes rows to the positions a permutation names
(`nl.store(out[perm_tile, i_f], ...)`); nisa.dma_copy gathers the same rows into a second output, and
nl.atomic_rmw adds the gathered rows back at their ids (repeated ids add up, as an embedding gradient does).
rows = table[ids] * scale for ids [96] into table [300, 64]; placed[perm[i]] = x[i] for x [128, 32]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(table, ids, x, perm):
    n = ids.shape[0]
    d = table.shape[1]
    rows_out = nl.ndarray((n, d), dtype=table.dtype, buffer=nl.shared_hbm)
    copied_out = nl.ndarray((n, d), dtype=table.dtype, buffer=nl.shared_hbm)
    placed = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    sums = nl.ndarray(table.shape, dtype=table.dtype, buffer=nl.shared_hbm)

    i_p = nl.arange(n)[:, None]
    i_f = nl.arange(d)[None, :]
    ids_tile = nl.load(ids[i_p])                         # row ids must be in SBUF: one per partition
    rows = nl.load(table[ids_tile[i_p, 0], i_f])         # gather
    nl.store(rows_out, value=nl.multiply(rows, 0.5))

    staged = nl.ndarray((n, d), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=staged, src=table[ids_tile, 0:d])  # the same gather through the DMA instruction
    nl.store(copied_out, value=staged)

    for t in nl.affine_range((table.shape[0] + 127) // 128):     # sums = 0, then sums[ids[i]] += rows[i]
        rows_here = min(128, table.shape[0] - t * 128)
        nl.store(sums[t * 128:t * 128 + rows_here, :], value=nl.zeros((rows_here, d), dtype=table.dtype))
    nl.atomic_rmw(sums[ids_tile[i_p, 0], i_f], value=rows, op=np.add)

    m, w = x.shape
    j_p = nl.arange(m)[:, None]
    j_f = nl.arange(w)[None, :]
    perm_tile = nl.load(perm[j_p])
    values = nl.load(x)
    nl.store(placed[perm_tile[j_p, 0], j_f], value=values)   # scatter
    return rows_out, copied_out, placed, sums
