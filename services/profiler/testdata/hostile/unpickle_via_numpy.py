# expect: SANDBOX_VIOLATION
# message: forbidden operation: unpickling builtins.print
# Arbitrary code through numpy: the kernel writes a pickle into its scratch and loads it with allow_pickle, which
# passes the static rules (no forbidden name appears); unpickling calls whatever the data names. The audit hook
# refuses the first global the pickle looks up.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np

PAYLOAD = b'cbuiltins\nprint\n(Vpayload ran\ntR.'


@nki.jit
def kernel(x):
    np.frombuffer(PAYLOAD, dtype=np.uint8).tofile('/scratch/payload.pkl')
    np.load('/scratch/payload.pkl', allow_pickle=True)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
