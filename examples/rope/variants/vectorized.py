"""RoPE variant: the builtin `vectorize_loop` result on the head loop. The loop variable h becomes a tile axis
(`h_all = nl.arange(H)[None, :, None]`): x is loaded and the result stored as one [128, H, D] access per position
tile, and each of the six element-wise steps is one VectorE instruction over all heads ([128, H, D/2]) instead of
H. cos/sin (the same for every head) are read with a stride-0 index along the head axis, so no copies are made.
Independent of VectorE/GpSimd overlap."""
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
        h_all = nl.arange(H)[None, :, None]
        i_p = nl.arange(128)[:, None, None]
        i_d = nl.arange(D)[None, None, :]
        i_c = 0 * h_all + nl.arange(half)[None, None, :]   # stride 0 along the head axis
        x_tile = nl.load(x[s * 128 + i_p, h_all * D + i_d])
        cos_tile = nl.load(cos[s * 128:(s + 1) * 128, :])
        sin_tile = nl.load(sin[s * 128:(s + 1) * 128, :])
        y = nl.ndarray((128, H, D), dtype=x.dtype, buffer=nl.sbuf)
        a = nl.multiply(x_tile[:, :, 0:half], cos_tile[i_p, i_c])
        b = nl.multiply(x_tile[:, :, half:D], sin_tile[i_p, i_c])
        y[:, :, 0:half] = nl.subtract(a, b)
        c = nl.multiply(x_tile[:, :, half:D], cos_tile[i_p, i_c])
        d = nl.multiply(x_tile[:, :, 0:half], sin_tile[i_p, i_c])
        y[:, :, half:D] = nl.add(c, d)
        nl.store(out[s * 128 + i_p, h_all * D + i_d], value=y)
    return out
