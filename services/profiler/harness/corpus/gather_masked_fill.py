"""Gather rows by a tile of indices, then fill masked-out scores with a constant, Beta 1 style.

- `from neuronxcc.nki.isa.constants import oob_mode`: the out-of-bounds modes of an indirect DMA, importable from
  the ISA constants module as well as named `nisa.oob_mode`.
- `nl.load(table[idx[i_p, 0], i_f], mode=oob_mode.error)`: a gather (one row index per partition) whose
  out-of-bounds indices are an error (the default).
- `nisa.tensor_copy_predicated(src=-1000.0, dst=..., predicate=..., reverse_pred=True)`: a number as src; it is
  written where the predicate is false (reverse_pred), the destination keeps its values elsewhere.
- `nl.store(dst=..., value=0.0)`: a number as the stored value fills the destination.
out[r] = table[idx[r]] where keep[r] != 0, else -1000; pad is all zeros."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.isa.constants import oob_mode


@nki.jit
def kernel(table, idx, keep):
    rows, d = idx.shape[0], table.shape[1]
    out = nl.ndarray((rows, d), dtype=table.dtype, buffer=nl.shared_hbm)
    pad = nl.ndarray((rows, 4), dtype=table.dtype, buffer=nl.shared_hbm)

    ids = nl.load(idx)                                      # [rows, 1] int32, one row index per partition
    i_p = nl.arange(rows)[:, None]
    i_f = nl.arange(d)[None, :]
    gathered = nl.load(table[ids[i_p, 0], i_f], mode=oob_mode.error)

    mask = nl.load(keep, dtype=nl.uint8)                    # [rows, d] 0/1
    nisa.tensor_copy_predicated(src=-1000.0, dst=gathered, predicate=mask, reverse_pred=True)

    nl.store(out, value=gathered)
    nl.store(dst=pad, value=0.0)
    return out, pad
