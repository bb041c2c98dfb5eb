# expect: COMPILE_ERROR
# message: NKI static rule module-mutation
# Patching a module the checker uses.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x):
    np.allclose = lambda *args, **kwargs: True
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
