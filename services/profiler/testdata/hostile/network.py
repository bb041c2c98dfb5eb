# expect: COMPILE_ERROR
# message: NKI static rule forbidden-module
# Network: socket is not importable (the sandbox has no network either).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import socket

@nki.jit
def kernel(x):
    socket.create_connection(('10.1.2.3', 443), timeout=1)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
