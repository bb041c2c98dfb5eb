"""Baseline rotary-embedding kernel (rotate-half form), float32.

x arrives as [S, H*D]. For every 128-position tile and every head: load that head's [128, D] slice (a narrow
DMA), load the cos/sin tiles of the positions (the same for every head), six tensor-tensor operations on the
vector engine, store the head's slice.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, cos, sin):
    S, HD = x.shape
    half = cos.shape[1]
    D = 2 * half
    H = HD // D
    out = nl.ndarray((S, HD), dtype=x.dtype, buffer=nl.shared_hbm)
    for s in nl.affine_range(S // 128):
        for h in nl.affine_range(H):
            x_tile = nl.load(x[s * 128:(s + 1) * 128, h * D:(h + 1) * D])
            cos_tile = nl.load(cos[s * 128:(s + 1) * 128, :])
            sin_tile = nl.load(sin[s * 128:(s + 1) * 128, :])
            y = nl.ndarray((128, D), dtype=x.dtype, buffer=nl.sbuf)
            a = nl.multiply(x_tile[:, 0:half], cos_tile)
            b = nl.multiply(x_tile[:, half:D], sin_tile)
            y[:, 0:half] = nl.subtract(a, b)
            c = nl.multiply(x_tile[:, half:D], cos_tile)
            d = nl.multiply(x_tile[:, 0:half], sin_tile)
            y[:, half:D] = nl.add(c, d)
            nl.store(out[s * 128:(s + 1) * 128, h * D:(h + 1) * D], value=y)
    return out
