# expect: COMPILE_ERROR
# message: NKI static rule forbidden-builtin
# Writing a system file with open().
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    with open('/usr/lib/evil.txt', 'w') as f:
        f.write('pwned')
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
