"""Rotary embedding, the NKIBench seed's form (our own kernel): x [D, S] with the two halves of the head dimension
on partitions 0..D/2-1 and D/2..D-1, cos/sin [D/2, S]. Per 512-column tile: the whole x tile and the coefficients
loaded, the lower half copied to partition 0 (tensor_tensor operands share a base partition), four products and
two combines into an output tile, one store. out[:D/2] = lo * cos - hi * sin, out[D/2:] = hi * cos + lo * sin."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE = 512


@nki.jit
def kernel(x, cos, sin):
    d, s = x.shape
    h = d // 2
    out = nl.ndarray((d, s), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(s // TILE):
        cols = slice(t * TILE, (t + 1) * TILE)
        whole = nl.load(x[:, cols])
        c = nl.load(cos[:, cols])
        sn = nl.load(sin[:, cols])
        lo = whole[0:h, :]
        hi = nl.copy(whole[h:d, :])
        result = nl.ndarray((d, TILE), dtype=x.dtype, buffer=nl.sbuf)
        lo_cos = nisa.tensor_tensor(lo, c, nl.multiply)
        hi_sin = nisa.tensor_tensor(hi, sn, nl.multiply)
        hi_cos = nisa.tensor_tensor(hi, c, nl.multiply)
        lo_sin = nisa.tensor_tensor(lo, sn, nl.multiply)
        result[0:h, :] = nisa.tensor_tensor(lo_cos, hi_sin, nl.subtract)
        result[h:d, :] = nisa.tensor_tensor(hi_cos, lo_sin, nl.add)
        nl.store(out[:, cols], value=result)
    return out
