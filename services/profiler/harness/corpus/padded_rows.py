"""A kernel that leaves padding rows undefined by contract: inputs padded to 128 rows, only the first `valid`
rows loaded, computed and stored (masked by row); the host keeps those rows. out[:valid] = exp(x[:valid]) @ w,
for x [128, 128] with 90 valid rows and w [128, 64]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w, valid):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    i_h, i_w = nl.mgrid[0:128, 0:128]
    rows = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    rows[...] = nl.load(x[i_h, i_w], mask=(i_h < valid))
    e = nl.exp(rows, mask=(i_h < valid))
    w_tile = nl.load(w)
    product = nisa.nc_matmul(nisa.nc_transpose(e), w_tile)
    o_h, o_w = nl.mgrid[0:128, 0:64]
    result = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    result[...] = nl.copy(product)
    nl.store(out[o_h, o_w], value=result, mask=(o_h < valid))
    return out
