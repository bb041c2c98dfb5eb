# expect: COMPILE_ERROR
# message: NKI static rule forbidden-module
# Fork bomb: os.fork is refused (the kernel's os is a stand-in with environ and getenv only; the sandbox also caps
# processes per uid).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import os

@nki.jit
def kernel(x):
    while True:
        os.fork()
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
