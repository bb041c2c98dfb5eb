"""`t.astype(dtype)` on loaded tiles (nki.tensor.astype of the Beta 1 API; an MoE tutorial's RMSNorm converts with
`x.astype(np.float32)` and back with `t.astype(x.dtype)`): a float32 tile to bfloat16 and back, scaled."""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    b = t.astype(nl.bfloat16)
    nl.store(out, value=nl.multiply(b.astype(np.float32), 3.0))
    return out
