"""A tile with two block dimensions indexed one at a time (buf[i][j, ...]). out = 0.5 * sum over x[0..3]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 32), dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((2, 2, nl.par_dim(128), 32), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        row = buf[i]                                    # only the first block dimension
        for j in nl.affine_range(2):
            row[j, :, :] = nl.load(x[i * 2 + j])
    acc = nl.zeros((128, 32), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(2):
        for j in nl.sequential_range(2):
            acc = nl.add(acc, buf[i][j])
    nl.store(out, nl.multiply(acc, 0.5))
    return out
