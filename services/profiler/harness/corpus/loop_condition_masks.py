"""Masks that combine index comparisons with conditions on loop variables, the way the neuron-team conv2d
lowering (also run by autocomp) writes its prefetch masks: `(i_h + d - 1 < H) & (i_h + d - 1 >= 0) & (n < N)`
with n and d affine_range indices. NKI traces a loop index symbolically; the simulator runs it as an int, so such
a comparison is a Python bool: True keeps the mask, False masks the instruction off.
x [2, 16, 8, 32]: out[n, d] = x[n] shifted by d - 1 rows (zero rows shifted in), the centre shift doubled."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    N, C, H, W = x.shape
    out = nl.ndarray((N, 3, C, H, W), dtype=x.dtype, buffer=nl.shared_hbm)
    i_c = nl.arange(C)[:, None, None]
    i_h = nl.arange(H)[None, :, None]
    i_w = nl.arange(W)[None, None, :]
    for n in nl.affine_range(N):
        for d in nl.affine_range(3):
            buf = nl.zeros((C, H, W), dtype=x.dtype, buffer=nl.sbuf)
            mask = (i_h + d - 1 < H) & (i_h + d - 1 >= 0) & (n < N)
            buf[i_c, i_h, i_w] = nl.load(x[n, i_c, i_h + d - 1, i_w], mask=mask)
            nl.store(out[n, d, i_c, i_h, i_w], value=buf[i_c, i_h, i_w])
            nl.store(out[n, d, i_c, i_h, i_w], value=nl.multiply(buf, 2.0), mask=(d == 1) & (i_c < C))
    return out
