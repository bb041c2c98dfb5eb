"""Beta 1 index grids and masks: a 3-axis nl.mgrid whose unused axis is dropped from the tile (x[i_p, i_f] with
i_p, i_f, i_one = nl.mgrid[0:128, 0:W, 0:1]), a mask built from an index of a smaller grid (bn_stats over column
chunks of 96, the last one partial), a max pool whose padding is removed by an elementwise mask (its indices
reach outside the tile), dropout at rate 0, and the erf-based gelu.
x [160, 192]: out = gelu((x - mean) / sqrt(var + eps)) per row; pooled = 3-wide max along each row (padding 1)."""
import math
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    pooled_out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f, i_one = nl.mgrid[0:128, 0:cols, 0:1]
    chunk = 96
    n_chunks = math.ceil(cols / chunk)
    i_c, i_s = nl.mgrid[0:chunk, 0:6]
    for t in nl.affine_range(math.ceil(rows / 128)):
        tile = nl.load(x[t * 128 + i_p, i_f], mask=(t * 128 + i_p < rows))
        stats = nl.ndarray((128, 6 * n_chunks), dtype=np.float32)
        for c in nl.affine_range(n_chunks):
            stats[i_p, c * 6 + i_s] = nisa.bn_stats(tile[i_p, c * chunk + i_c], mask=(c * chunk + i_c < cols),
                                                   dtype=np.float32)
        moments = nisa.bn_aggr(stats)
        scale = nl.rsqrt(moments[:, 1] + 1e-5)
        normed = nisa.tensor_scalar(data=tile, op0=np.subtract, operand0=moments[:, 0], op1=np.multiply,
                                    operand1=scale)
        kept = nl.dropout(normed, 0.0)
        nl.store(out[t * 128 + i_p, i_f], value=nl.gelu(kept), mask=(t * 128 + i_p < rows))

        j_p = nl.arange(128)[:, None, None]
        j_f = nl.arange(cols)[None, :, None]
        j_k = nl.arange(3)[None, None, :]
        pooled = nl.max(tile[j_p, j_f + j_k - 1], axis=[2],
                        mask=(j_f + j_k - 1 >= 0) & (j_f + j_k - 1 < cols))
        nl.store(pooled_out[t * 128 + i_p, i_f], value=pooled, mask=(t * 128 + i_p < rows))
    return out, pooled_out
