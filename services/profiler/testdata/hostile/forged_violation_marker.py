# expect: SANDBOX_VIOLATION
# message: bytes more)
# The kernel writes the violation marker itself, with a 40 KB detail of two-byte characters starting at an odd
# offset: the message is cut at a character boundary (a proto string must stay valid UTF-8). A forged marker only
# ends the kernel's own profile.
import neuronxcc.nki as nki
import numpy as np

MARKER = ('{"event": "socket.connect", "detail": "a' + '\u00e9' * 20000 + '", "line": 1}').encode('utf-8')


@nki.jit
def kernel(x):
    np.frombuffer(MARKER, dtype=np.uint8).tofile('/scratch/violation.json')
    return x
