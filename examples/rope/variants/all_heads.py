"""RoPE variant: cos/sin loaded once per position tile and replicated across the heads in SBUF, x loaded and the
result stored as whole [128, H*D] rows, and each of the six element-wise steps done for all heads at once (one
VectorE instruction over [128, H, D/2] instead of H over [128, D/2]): at D/2 = 64 elements per partition the
per-instruction overhead, not the element work, dominates."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, cos, sin):
    S, HD = x.shape
    half = cos.shape[1]
    D = 2 * half
    H = HD // D
    out = nl.ndarray((S, HD), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None, None]
    ih = nl.arange(H)[None, :, None]
    jf = nl.arange(half)[None, None, :]
    for s in nl.affine_range(S // 128):
        cos_tile = nl.load(cos[s * 128:(s + 1) * 128, :])
        sin_tile = nl.load(sin[s * 128:(s + 1) * 128, :])
        cos_rep = nl.ndarray((128, H * half), dtype=x.dtype, buffer=nl.sbuf)
        sin_rep = nl.ndarray((128, H * half), dtype=x.dtype, buffer=nl.sbuf)
        for h in nl.affine_range(H):
            cos_rep[:, h * half:(h + 1) * half] = nl.copy(cos_tile)
            sin_rep[:, h * half:(h + 1) * half] = nl.copy(sin_tile)
        x_row = nl.load(x[s * 128:(s + 1) * 128, :])
        y = nl.ndarray((128, HD), dtype=x.dtype, buffer=nl.sbuf)
        x1 = x_row[ip, ih * D + jf]
        x2 = x_row[ip, ih * D + half + jf]
        c = cos_rep[ip, ih * half + jf]
        sn = sin_rep[ip, ih * half + jf]
        y[ip, ih * D + jf] = nl.subtract(nl.multiply(x1, c), nl.multiply(x2, sn))
        y[ip, ih * D + half + jf] = nl.add(nl.multiply(x2, c), nl.multiply(x1, sn))
        nl.store(out[s * 128:(s + 1) * 128, :], value=y)
    return out
