# expect: COMPILE_ERROR
# message: NKI static rule private-attribute
# An import alias makes numpy's wrapper the builtins of later functions, so a bare `_module` reads the host's
# numpy (its pickle-enabled array reader would then run any callable).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), 2.0))
    return out


import numpy as __builtins__


def probe():
    return _module


probe().lib.format.open_memmap
