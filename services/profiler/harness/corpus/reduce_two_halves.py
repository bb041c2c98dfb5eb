"""Performance-guide Opt #5b, before (our own kernel): two matmuls each produce a 64-partition PSUM tile, and
each tile is reduced by its own tensor_reduce (two 64-lane VectorE instructions in a row). Per step t of 32:
out[:, t] = row sums of (lhsT.T @ rhs[t]), lhsT [128, 128], rhs [steps, 128, 512]."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(lhsT, rhs):
    steps = rhs.shape[0]
    out = nl.ndarray((128, steps), dtype=nl.float32, buffer=nl.shared_hbm)
    stationary = nl.load(lhsT)
    sums = nl.ndarray((128, steps), dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.affine_range(steps):
        moving = nl.load(rhs[t])
        top = nisa.nc_matmul(stationary[:, 0:64], moving)        # [64, 512] in PSUM
        bottom = nisa.nc_matmul(stationary[:, 64:128], moving)
        sums[0:64, t:t + 1] = nisa.tensor_reduce(np.add, top, axis=(1,))
        sums[64:128, t:t + 1] = nisa.tensor_reduce(np.add, bottom, axis=(1,))
    nl.store(out, value=sums)
    return out
