"""y = 2x + 1 in one [128, 512] tile (a test fixture of our own)."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x_tile = nl.load(x)
    y = nl.add(nl.multiply(x_tile, 2.0), 1.0)
    nl.store(out, value=y)
    return out
