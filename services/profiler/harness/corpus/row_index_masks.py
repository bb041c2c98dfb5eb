"""Rows loaded one at a time by an integer loop index into fixed-size row chunks, under mask=row < H: the rows of
the last chunk past the end of the input are masked off (the form of student conv2d kernels that load 16-row
chunks of an image whose height is no multiple of 16). Each chunk is then summed over its rows."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

CHUNK = 4


@nki.jit
def row_index_masks(x):
    channels, height, width = x.shape
    n_chunks = (height + CHUNK - 1) // CHUNK
    out = nl.ndarray((channels, n_chunks, width), dtype=x.dtype, buffer=nl.shared_hbm)
    for c in nl.affine_range(n_chunks):
        rows = nl.zeros((nl.par_dim(channels), CHUNK, width), dtype=x.dtype, buffer=nl.sbuf)
        for r in nl.affine_range(CHUNK):
            row = c * CHUNK + r
            rows[:, r, :] = nl.load(x[0:channels, row, :], mask=row < height)
        total = nl.ndarray((nl.par_dim(channels), width), dtype=x.dtype, buffer=nl.sbuf)
        total[...] = nl.copy(rows[:, 0, :])
        for r in nl.sequential_range(1, CHUNK):
            total[...] = nl.add(total, rows[:, r, :])
        nl.store(out[0:channels, c, :], value=total)
    return out


kernel = row_index_masks
