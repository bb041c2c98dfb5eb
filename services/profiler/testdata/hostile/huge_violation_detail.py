# expect: SANDBOX_VIOLATION
# message: forbidden operation: unpickling xxxxxxxx
# A violation whose detail the kernel chooses (the module name of an unpickled global, 1 MiB long): the detail is cut
# short.
import neuronxcc.nki as nki
import numpy as np

PAYLOAD = b'c' + b'x' * (1 << 20) + b'\nprint\n(Vpayload ran\ntR.'


@nki.jit
def kernel(x):
    np.frombuffer(PAYLOAD, dtype=np.uint8).tofile('/scratch/payload.pkl')
    np.load('/scratch/payload.pkl', allow_pickle=True)
    return x
