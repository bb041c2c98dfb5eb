"""nisa.dma_compute (NKI 0.3+): sums computed by the DMA engines in float32. A residual add while loading
(two HBM sources into an SBUF tile, the page's older positional order with scales), an accumulation into an SBUF
tile (dst among srcs, the newer order), and a scatter-add of rows into HBM through `.ap(vector_offset=)` where
the row ids repeat (each id adds once, repeated ids accumulating). out = x + r + 2 * x; table[ids[i], :] += y[i]."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, r, table, ids, y):
    rows, width = table.shape
    n = ids.shape[0]
    summed = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    out = nl.ndarray((rows, width), dtype=table.dtype, buffer=nl.shared_hbm)

    acc = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_compute(acc, [x, r], [1.0, 1.0], nl.add)
    twice = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=twice, data=acc, op0=nl.multiply, operand0=0.0)
    nisa.dma_compute(twice, [x, x], nl.add)
    nisa.dma_compute(dst=acc, srcs=[acc, twice], reduce_op=nl.add)
    nisa.dma_copy(dst=summed, src=acc)

    staged = nl.ndarray((rows, width), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=staged, src=table)
    nisa.dma_copy(dst=out, src=staged)
    ids_sb = nl.ndarray((n, 1), dtype=ids.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ids_sb, src=ids.ap(pattern=[[1, n], [1, 1]], offset=0))
    y_sb = nl.ndarray((n, width), dtype=y.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=y_sb, src=y)
    rows_at = out.ap(pattern=[[width, n], [1, width]], offset=0, vector_offset=ids_sb, indirect_dim=0)
    nisa.dma_compute(dst=rows_at, srcs=[rows_at, y_sb], reduce_op=nl.add, unique_indices=False)
    return summed, out
