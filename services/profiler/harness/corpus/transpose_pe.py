"""Performance-guide Opt #10, after (our own kernel): the transpose of transpose_dma.py as plain [128, 128] loads
and TensorE transposes (nisa.nc_transpose) into one [128, R] SBUF tile. out = x.T."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    rows = x.shape[0]
    out = nl.ndarray((128, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    whole = nl.ndarray((128, rows), dtype=x.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(rows // 128):
        block = nl.load(x[b * 128:(b + 1) * 128, :])
        whole[:, b * 128:(b + 1) * 128] = nisa.nc_transpose(block)
    nl.store(out, value=whole)
    return out
