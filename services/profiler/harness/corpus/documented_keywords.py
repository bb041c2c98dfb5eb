"""Keywords of documented NKI instructions the API-surface gap analysis found missing (Beta 1 form): a reversed
tensor_tensor_scan (b[:, i] - (prev - a[:, i])), a dma_copy that adds into the output (dst_rmw_op=nl.add),
tensor_scalar_reduce with the register loaded from a per-row tile (load_reduce) and a transpose cast to bfloat16.
a, b [64, 32]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
    scan = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    total = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    sums = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
    flipped = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    s = nisa.tensor_tensor_scan(x, y, initial=1.0, op0=np.subtract, op1=np.subtract, reverse0=True, reverse1=True)
    nl.store(scan, s)
    nisa.dma_copy(dst=total, src=a)
    nisa.dma_copy(dst=total, src=y, dst_rmw_op=nl.add)
    start = nl.full((a.shape[0], 1), 0.5, dtype=np.float32, buffer=nl.sbuf)
    r = nl.ndarray((a.shape[0], 1), dtype=np.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(data=x, op0=np.multiply, operand0=2.0, reduce_op=np.add, reduce_res=r,
                              reduce_cmd=nisa.reduce_cmd.load_reduce, reduce_init=start)
    nl.store(sums, r)
    t = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.bfloat16, buffer=nl.sbuf)
    t[...] = nisa.nc_transpose(x, dtype=nl.bfloat16)
    nl.store(flipped, nl.copy(t, dtype=np.float32))
    return scan, total, sums, flipped
