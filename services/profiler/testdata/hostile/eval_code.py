# expect: COMPILE_ERROR
# message: NKI static rule forbidden-builtin
# Dynamic code.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    eval("__import__('os').system('id')")
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
