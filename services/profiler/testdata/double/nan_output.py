import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    zero = nl.multiply(tile, 0.0)
    nl.store(out, value=nl.divide(zero, zero))
    return out
