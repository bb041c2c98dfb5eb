import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    # A correct kernel that doubles the first 64 rows of its argument in place and returns it.
    tile = nl.load(x[0:64, :])
    nl.store(x[0:64, :], value=nl.multiply(tile, 2.0))
    return x
