"""dtype objects as kernels spell them: nl.fp32.min as a running-max start, np.dtype(nl.float32) and
np.dtype(nl.bfloat16).itemsize arithmetic. out = max(rowmax(x), 0.5)."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 1), dtype=np.dtype(nl.float32), buffer=nl.shared_hbm)
    chunk = 128 if np.dtype(nl.bfloat16).itemsize == 4 else 128     # storage size of the simulator's bf16
    best = nl.full((128, 1), nl.fp32.min, dtype=nl.float32)
    for i in nl.affine_range(x.shape[1] // chunk):
        tile = nl.load(x[:, i * chunk:(i + 1) * chunk])
        best = nl.maximum(best, nl.max(tile, axis=1, keepdims=True))
    nl.store(out, nl.maximum(best, 0.5))
    return out
