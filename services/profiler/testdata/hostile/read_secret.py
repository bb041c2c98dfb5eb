# expect: RUNTIME_ERROR
# message: KeyError: 'ACCELOPT_TEST_SECRET'
# Reading the worker's environment through os.environ: the kernel's os is a stand-in whose environment is its own,
# empty when the kernel is loaded (protocol/host_environment.py).
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
