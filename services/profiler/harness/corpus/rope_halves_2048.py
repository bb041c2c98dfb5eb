"""Rotary embedding, the form of AccelOpt's published best kernel for the NKIBench rope task (our own kernel):
2048-column tiles, each half of x loaded by its own DMA to partition 0 (no copy), the four products and two
combines, each half stored by its own DMA. Same result as rope_halves_512.py."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE = 2048


@nki.jit
def kernel(x, cos, sin):
    d, s = x.shape
    h = d // 2
    out = nl.ndarray((d, s), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(s // TILE):
        cols = slice(t * TILE, (t + 1) * TILE)
        lo = nl.load(x[0:h, cols])
        hi = nl.load(x[h:d, cols])
        c = nl.load(cos[:, cols])
        sn = nl.load(sin[:, cols])
        first = nisa.tensor_tensor(nisa.tensor_tensor(lo, c, nl.multiply), nisa.tensor_tensor(hi, sn, nl.multiply),
                                   nl.subtract)
        second = nisa.tensor_tensor(nisa.tensor_tensor(hi, c, nl.multiply), nisa.tensor_tensor(lo, sn, nl.multiply),
                                    nl.add)
        nl.store(out[0:h, cols], value=first)
        nl.store(out[h:d, cols], value=second)
    return out
