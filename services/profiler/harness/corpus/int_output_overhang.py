"""An integer output with an overhang guard: a (len(keys) + 64, 1) int32 result written in fixed 128-element windows
at data-dependent starts (Beta 2 `.ap(scalar_offset=...)` DMAs), so the guard's tail is never written; the problem's
transform keeps the first N elements (the form of a public radix-sort pass)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def int_output_overhang(keys, starts):
    n = keys.shape[0]
    blocks = starts.shape[1]
    out = nl.ndarray((n + 64, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    offsets = nl.ndarray((1, blocks), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=offsets, src=starts)
    row = nl.ndarray((1, 128), dtype=nl.int32, buffer=nl.sbuf)
    doubled = nl.ndarray((1, 128), dtype=nl.int32, buffer=nl.sbuf)
    for b in range(blocks):
        nisa.dma_copy(dst=row, src=keys.ap(pattern=[[128, 1], [1, 128]], offset=b * 64))
        nisa.tensor_scalar(dst=doubled, data=row, op0=nl.multiply, operand0=2)
        nisa.dma_copy(dst=out.ap(pattern=[[1, 128]], scalar_offset=offsets[0:1, b:b + 1], indirect_dim=0),
                      src=doubled)
    return out


kernel = int_output_overhang
