"""Scalar dynamic access (Beta 2 `.ap(..., scalar_offset=s, indirect_dim=d)`): a DMA whose start is a value in
SBUF. The pattern moves by `s * prod(t.shape[d + 1:])` elements: with d=0 a runtime row offset, with d=1 a
runtime column. rows = x[start:start + 64, 0:96] with start = ids[0] * 2; picked[i] = x[i, ids[i]] (a per-row
column, one (1, 1) index tile view per row) for x [200, 128], ids [32] (int32)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, ids):
    n_rows, width = x.shape
    n = ids.shape[0]
    rows = nl.ndarray((64, 96), dtype=x.dtype, buffer=nl.shared_hbm)
    picked = nl.ndarray((n, 1), dtype=x.dtype, buffer=nl.shared_hbm)

    ids_sb = nl.ndarray((n, 1), dtype=ids.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ids_sb, src=ids.ap(pattern=[[1, n], [1, 1]], offset=0))

    start = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=start, data=ids_sb[0:1, 0:1], op0=nl.multiply, operand0=2)
    block = nl.ndarray((64, 96), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=block, src=x.ap(pattern=[[width, 64], [1, 96]], offset=0, scalar_offset=start,
                                      indirect_dim=0))
    nisa.dma_copy(dst=rows, src=block)

    values = nl.ndarray((n, 1), dtype=x.dtype, buffer=nl.sbuf)
    for i in range(n):
        nisa.dma_copy(dst=values[i:i + 1, :],
                      src=x.ap(pattern=[[width, 1], [1, 1]], offset=i * width,
                               scalar_offset=ids_sb.ap(pattern=[[1, 1], [1, 1]], offset=i), indirect_dim=1))
    nisa.dma_copy(dst=picked, src=values)
    return rows, picked
