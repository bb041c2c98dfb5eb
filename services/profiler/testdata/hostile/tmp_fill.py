# expect: RUNTIME_ERROR
# message: No space left on device
# Filling /tmp: a size-limited tmpfs inside the memory budget.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x):
    block = np.zeros(4 << 20, dtype=np.uint8)
    for n in range(100000):
        np.savez('/tmp/fill%d' % n, block)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
