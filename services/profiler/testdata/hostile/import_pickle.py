# expect: COMPILE_ERROR
# message: NKI static rule import
# Importing a module NKI does not allow.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import pickle


@nki.jit
def kernel(x):
    pickle.loads(b'')
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
