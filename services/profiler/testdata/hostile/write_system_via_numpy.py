# expect: SANDBOX_VIOLATION
# message: write to /usr/lib/evil.bin
# Writing outside the scratch directory without open().
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x):
    np.zeros(4).tofile('/usr/lib/evil.bin')
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
