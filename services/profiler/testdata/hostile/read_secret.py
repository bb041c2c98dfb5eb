# expect: COMPILE_ERROR
# message: NKI static rule forbidden-module
# Reading the worker's environment through os.environ.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import os

@nki.jit
def kernel(x):
    secret = os.environ['ACCELOPT_TEST_SECRET']
    raise RuntimeError('leaked ' + secret)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
