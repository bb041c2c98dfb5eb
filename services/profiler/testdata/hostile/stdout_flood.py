# expect: TIMEOUT
# message: deadline
# Unbounded stdout: the worker keeps only its head and tail.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    line = 'x' * (1 << 20)
    while True:
        print(line)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
