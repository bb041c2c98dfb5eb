"""Plain-bool masks (a Python comparison) and `directives=` on loop ranges; rows not a multiple of 128.
out = exp(x) for x [200, 64]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = (rows + 127) // 128
    full_width = cols <= 512                                  # a plain bool
    for t in nl.affine_range(tiles, directives=ncc.multi_buffer(2)):
        i_p, i_f = nl.mgrid[0:128, 0:cols]
        rows_left = t * 128 + i_p < rows
        tile = nl.load(x[t * 128 + i_p, i_f], mask=rows_left)
        result = nl.exp(tile, mask=full_width)
        nl.store(out[t * 128 + i_p, i_f], result, mask=rows_left)
    return out
