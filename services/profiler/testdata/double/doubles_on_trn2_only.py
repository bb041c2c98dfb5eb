import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    # Correct (2x) only when the kernel is told it runs on a NeuronCore-v3 (trn2); 3x elsewhere.
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    scale = 2.0 if nisa.get_nc_version() == nisa.nc_version.gen3 else 3.0
    nl.store(out, value=nl.multiply(nl.load(x), scale))
    return out
