# expect: RUNTIME_ERROR
# message: NKI kernels cannot use module 'operator'
# The host's operator module, which numpy's modules hold under a harmless name: attrgetter('__globals__') reads a
# function's globals, and through them __import__, which the private-attribute rule forbids by name.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


def helper():
    return 0


@nki.jit
def kernel(x):
    builtins = np.core.numeric.operator.attrgetter('__globals__')(helper)['__builtins__']
    imported = builtins['__import__'] if isinstance(builtins, dict) else np.core.numeric.operator.attrgetter(
        '__import__')(builtins)
    raise RuntimeError('escaped: ' + repr(imported('os').listdir('/')))
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), 2.0))
    return out
