"""nisa.local_gather in both API generations' forms, as in the NKI API example: each GpSimd core (16 partitions)
gathers 4-element runs of every partition's own row at the core's indices, taken partition first. Beta 1 returns
the gathered tile; the same instruction with dst= writes it into a [128, 16, 4] tile."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(src, index):
    out = nl.ndarray((2, 128, 16, 4), dtype=src.dtype, buffer=nl.shared_hbm)
    src_tile = nl.load(src)
    index_tile = nl.load(index)
    gathered = nisa.local_gather(src_tile, index_tile, num_elem_per_idx=4)
    nl.store(out[0], value=gathered)
    first_half = nl.ndarray((128, 16, 4), dtype=src.dtype, buffer=nl.sbuf)
    nisa.memset(dst=first_half, value=0.0)
    nisa.local_gather(dst=first_half[:, 0:8, :], src_buffer=src_tile, index=index_tile, num_elem_per_idx=4,
                      num_valid_indices=8)
    nl.store(out[1], value=first_half)
    return out
