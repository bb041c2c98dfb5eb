"""NKI Beta 2 destination-first calls with their optional parameters passed by position, in the order of the Beta 2
isa stub: tensor_copy(dst, src, engine), tensor_tensor(dst, data1, data2, op, engine, name), tensor_scalar(dst,
data, op0, operand0, reverse0, op1, operand1, reverse1, engine), memset(dst, value, engine), iota(dst, pattern,
offset, channel_multiplier), reciprocal(dst, data, name), scalar_tensor_tensor(..., reverse0, reverse1, name),
tensor_tensor_scan(..., reverse0, reverse1, name). x [16, 32] -> out [16, 6, 32]."""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((16, 6, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    u = nl.ndarray((16, 6, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u[:, 0, :], t, nisa.vector_engine)
    nisa.tensor_tensor(u[:, 1, :], t, t, nl.add, nisa.gpsimd_engine, "twice")
    nisa.tensor_scalar(u[:, 2, :], t, nl.multiply, 2.0, False, nl.add, 1.0, False, nisa.vector_engine)
    nisa.memset(u[:, 3, :], 3.0, nisa.vector_engine)
    nisa.iota(u[:, 4, :], [[1, 32]], 5, 2)
    r = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(r, t, "inverse")
    w = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(w, r, nl.multiply, 0.0, nl.add, u[:, 3, :], False, False, "three")
    nisa.tensor_tensor_scan(u[:, 5, :], t, w, 0.0, nl.maximum, nl.add, False, False, "scan")
    nisa.dma_copy(dst=out, src=u)
    return out
