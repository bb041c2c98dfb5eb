# expect: RUNTIME_ERROR
# message: environments seen
# Every process environment it can see (no os needed): the worker's secrets must not be there.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x):
    seen = []
    for pid in ['1', 'self'] + [str(n) for n in range(2, 64)]:
        try:
            seen.append(np.fromfile('/proc/' + pid + '/environ', dtype=np.uint8).tobytes())
        except OSError:
            pass
    raise RuntimeError('environments seen: ' + repr(seen))
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
