"""On-chip scalar dynamic access, NKI 0.4's form of the dynamic copies: `nisa.tensor_copy` with
`t.ap(pattern, offset, scalar_offset=s, indirect_dim=d)` views of SBUF tensors, `s` a [1, 1] int32 tile in SBUF
read by the copy when it runs (the kernel never sees the value).
- A window of W columns of every partition, starting at column starts[j] of x (a dynamic source, indirect_dim=1
  of a [P, C] tile: the start moves by s elements);
- scaled by 0.5 and written into block places[j] of a [P, N, W] result (a dynamic destination, indirect_dim=1 of
  a three-dimensional tile: the start moves by s * W elements);
- the result reaches HBM by a DMA whose SBUF side is itself a scalar dynamic access (block order reversed by the
  offsets N - 1 - j, computed in SBUF).
out[:, j*W:(j+1)*W] = result block N-1-j, result block places[j] = 0.5 * x[:, starts[j]:starts[j]+W]."""
import nki
import nki.isa as nisa
import nki.language as nl

W = 16      # window width (columns)


@nki.jit
def kernel(x, starts, places, reverse):
    p, c = x.shape
    n = starts.shape[1]
    out = nl.ndarray((p, n * W), dtype=x.dtype, buffer=nl.shared_hbm)

    x_tile = nl.ndarray((p, c), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_tile, src=x)
    offsets = nl.ndarray((1, 3 * n), dtype=nl.int32, buffer=nl.sbuf)     # starts, places, reverse block ids
    nisa.dma_copy(dst=offsets[:, 0:n], src=starts)
    nisa.dma_copy(dst=offsets[:, n:2 * n], src=places)
    nisa.dma_copy(dst=offsets[:, 2 * n:3 * n], src=reverse)
    result = nl.ndarray((p, n, W), dtype=x.dtype, buffer=nl.sbuf)
    window = nl.ndarray((p, W), dtype=x.dtype, buffer=nl.sbuf)
    half = nl.ndarray((p, W), dtype=x.dtype, buffer=nl.sbuf)

    for j in nl.sequential_range(n):
        start = offsets.ap([[3 * n, 1], [1, 1]], j)
        place = offsets.ap([[3 * n, 1], [1, 1]], n + j)
        nisa.tensor_copy(dst=window, src=x_tile.ap([[c, p], [1, W]], 0, scalar_offset=start, indirect_dim=1))
        nisa.tensor_scalar(dst=half, data=window, op0=nl.multiply, operand0=0.5)
        nisa.tensor_copy(dst=result.ap([[n * W, p], [1, W]], 0, scalar_offset=place, indirect_dim=1), src=half)
    for j in nl.sequential_range(n):
        block = offsets.ap([[3 * n, 1], [1, 1]], 2 * n + j)
        nisa.dma_copy(dst=out[:, j * W:(j + 1) * W],
                      src=result.ap([[n * W, p], [1, W]], 0, scalar_offset=block, indirect_dim=1))
    return out
