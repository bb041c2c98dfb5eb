"""NKI Beta 2 access patterns and pattern iota (`import nki`): `.ap()` reads overlapping rows of an HBM tensor
(a sliding window of 2 rows per partition) and regroups an SBUF tile into 2x2 windows that nl.sum reduces;
`nisa.iota(dst, pattern, offset, channel_multiplier)` writes p * 100 + column; `nisa.engine.vector` names the
engine of a copy; the pattern form of `nisa.affine_select` keeps the lower triangle (p - j >= 0).
x [65, 32]: pooled[p, j] = sum of x[p:p+2, 2j:2j+2], plus 100 p + j; causal = pooled where j <= p, else -1e9."""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x):
    h, w = x.shape
    rows = h - 1
    out = nl.ndarray((rows, w // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    pairs = nl.ndarray((rows, 2, w), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=pairs, src=x.ap(pattern=[[w, rows], [w, 2], [1, w]], offset=0))
    windows = pairs.ap(pattern=[[2 * w, rows], [2, w // 2], [w, 2], [1, 2]], offset=0)
    pooled = nl.sum(windows, axis=[2, 3])
    ramp = nl.ndarray((rows, w // 2), dtype=nl.int32, buffer=nl.sbuf)
    nisa.iota(dst=ramp, pattern=[[1, w // 2]], offset=0, channel_multiplier=100)
    ramp_f = nl.ndarray((rows, w // 2), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=ramp_f, src=ramp, engine=nisa.engine.vector)
    total = nl.ndarray((rows, w // 2), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=total, data1=pooled, data2=ramp_f, op=nl.add)
    nisa.dma_copy(dst=out, src=total)
    causal_out = nl.ndarray((rows, w // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    causal = nl.ndarray((rows, w // 2), dtype=x.dtype, buffer=nl.sbuf)
    nisa.affine_select(dst=causal, pattern=[[-1, w // 2]], offset=0, channel_multiplier=1, on_true_tile=total,
                       on_false_value=-1e9, cmp_op=nl.greater_equal)
    nisa.dma_copy(dst=causal_out, src=causal)
    return out, causal_out
