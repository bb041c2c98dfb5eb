"""RoPE variant: cos/sin tiles loaded once per position tile (hoisted out of the head loop), x loaded and
the result stored as whole [128, H*D] rows (one wide DMA each instead of H narrow ones), and half of the
multiplies moved to the GpSimd engine so that DVE and Pool share the element-wise work."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, cos, sin):
    S, HD = x.shape
    half = cos.shape[1]
    D = 2 * half
    H = HD // D
    out = nl.ndarray((S, HD), dtype=x.dtype, buffer=nl.shared_hbm)
    for s in nl.affine_range(S // 128):
        cos_tile = nl.load(cos[s * 128:(s + 1) * 128, :])
        sin_tile = nl.load(sin[s * 128:(s + 1) * 128, :])
        x_row = nl.load(x[s * 128:(s + 1) * 128, :])
        y = nl.ndarray((128, HD), dtype=x.dtype, buffer=nl.sbuf)
        for h in nl.affine_range(H):
            x1 = x_row[:, h * D:h * D + half]
            x2 = x_row[:, h * D + half:(h + 1) * D]
            a = nl.multiply(x1, cos_tile)
            b = nisa.tensor_tensor(x2, sin_tile, op=nl.multiply, engine=nisa.gpsimd_engine)
            y[:, h * D:h * D + half] = nl.subtract(a, b)
            c = nl.multiply(x2, cos_tile)
            d = nisa.tensor_tensor(x1, sin_tile, op=nl.multiply, engine=nisa.gpsimd_engine)
            y[:, h * D + half:(h + 1) * D] = nl.add(c, d)
        nl.store(out[s * 128:(s + 1) * 128, :], value=y)
    return out
