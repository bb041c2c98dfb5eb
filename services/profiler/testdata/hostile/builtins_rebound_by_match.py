# expect: COMPILE_ERROR
# message: NKI static rule private-attribute
# A match capture binds __builtins__ to numpy's wrapper, whose namespace holds the host's numpy; rebinding it to
# numpy.compat.py3k then makes its `os` a free name of every later function.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), 2.0))
    return out


match np:
    case __builtins__:
        pass


def real_numpy():
    return _module


match real_numpy().compat.py3k:
    case __builtins__:
        pass


def host_os():
    return os


OS = host_os()
raise ValueError(repr((OS.getuid(), OS.listdir("/"), OS.getcwd())))
