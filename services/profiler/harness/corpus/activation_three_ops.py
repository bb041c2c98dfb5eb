"""Performance-guide Opt #6, before (our own kernel): scale, shift and exp as three instructions, applied 16 times
in a chain to one [128, 512] tile (each step reads the previous result). out = f^16(x), f(x) = exp(x * s + b)
with s and b per-partition [128, 1] columns."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

STEPS = 16


@nki.jit
def kernel(x, scale, bias):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    s = nl.load(scale)
    b = nl.load(bias)
    value = nl.load(x)
    for _ in nl.sequential_range(STEPS):
        value = nl.exp(nl.add(nl.multiply(value, s), b))
    nl.store(out, value=value)
    return out
