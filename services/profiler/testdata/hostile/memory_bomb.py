# expect: OUT_OF_MEMORY
# message: memory limit
# Unbounded allocation.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    hoard = []
    while True:
        hoard.append(bytearray(256 << 20))
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
