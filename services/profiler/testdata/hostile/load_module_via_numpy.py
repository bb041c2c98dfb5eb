# expect: RUNTIME_ERROR
# message: NKI kernels cannot use module 'numpy.compat'
# Code the static rules never see: the kernel writes a Python file into its scratch and has numpy load it as a
# module (numpy.compat.npy_load_module), whose code imports anything. Were numpy.compat reachable, the audit hook
# would refuse running code from the scratch directory (SANDBOX_VIOLATION).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np

CODE = b'import os\nLISTING = os.listdir("/")\n'


@nki.jit
def kernel(x):
    np.frombuffer(CODE, dtype=np.uint8).tofile('/scratch/loaded.py')
    loaded = np.compat.npy_load_module('loaded', '/scratch/loaded.py')
    raise RuntimeError('escaped: ' + repr(loaded.LISTING))
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), 2.0))
    return out
