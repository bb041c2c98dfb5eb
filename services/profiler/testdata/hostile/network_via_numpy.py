# expect: SANDBOX_VIOLATION
# message: forbidden operation: socket
# Network through numpy's DataSource: the audit hook names it, bubblewrap has no network anyway.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x):
    np.DataSource().open('http://example.com/weights.npy')
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
