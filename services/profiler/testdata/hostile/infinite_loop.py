# expect: TIMEOUT
# message: exceeded
# A CPU-spinning kernel: killed by the CPU-time limit or the deadline.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    while True:
        pass
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
