import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    # An instruction only the replay checks (an engine access of 64 partitions starts at partition 0 or 64), then
    # instructions without end: the replay's verdict on the first one ends the profile, and the recording is stopped.
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    shifted = nl.multiply(tile[16:80, :], 2.0)
    while True:
        tile = nl.multiply(tile, 1.0)
    return out
