"""Dynamic runs, the older (NKI 2.21-era) multi-offset form of the dynamic copies: one call with a tile of N
offsets read from SBUF copies N element runs, one per offset ("each index element specifying the offset along
the free dimension will trigger a tensor_copy instruction").
- Rows picked from a table held on one partition: `table[0, idx_tile, i_f]` with idx_tile an [N, 1] int32 tile
  gives an [N, D] tile whose row k is table row idx[k] (the NKI errors page's workaround form).
- Columns picked from every partition: `x_tile[i_p, col_tile[0, j]]` with col_tile [1, M] gives x[:, cols].
- The picked rows, scaled by 3, written back into a zeroed table at other offsets with tensor_copy_dynamic_dst.
table_out[0, places[k], :] = 3 * table[0, idx[k], :] (other rows 0); cols_out = x[:, cols]."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(table, idx, places, x, cols):
    _, rows, d = table.shape
    n = idx.shape[0]
    p, m = x.shape[0], cols.shape[1]
    table_out = nl.ndarray((1, rows, d), dtype=table.dtype, buffer=nl.shared_hbm)
    cols_out = nl.ndarray((p, m), dtype=x.dtype, buffer=nl.shared_hbm)

    table_tile = nl.load(table)                     # [1, rows, d]: the whole table on partition 0
    idx_tile = nl.load(idx)                         # [n, 1] int32: which rows to pick
    place_tile = nl.load(places)                    # [n, 1] int32: where they go
    i_k, i_f = nl.mgrid[0:n, 0:d]
    picked = nisa.tensor_copy_dynamic_src(table_tile[0, idx_tile, i_f])     # [n, d], row k on partition k
    scaled = nl.multiply(picked, 3.0)
    result = nl.zeros((1, rows, d), dtype=table.dtype, buffer=nl.sbuf)
    nisa.tensor_copy_dynamic_dst(dst=result[0, place_tile, i_f], src=scaled)
    nl.store(table_out, value=result)

    x_tile = nl.load(x)
    col_tile = nl.load(cols)                        # [1, m] int32: which columns to pick
    i_p, i_j = nl.mgrid[0:p, 0:m]
    nl.store(cols_out, value=nisa.tensor_copy_dynamic_src(x_tile[i_p, col_tile[0, i_j]]))
    return table_out, cols_out
