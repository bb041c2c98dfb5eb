"""Selects and scans with the accumulation registers (Beta 2 destination form): nisa.select_reduce (predicate
select, then the row maximum into reduce_res), nisa.activation (exp(x - row max) and the row sum into reduce_res; the
NeuronCore-v4 nisa.exponential computes the same on the Vector Engine), and nisa.tensor_scalar_cumulative (a running
sum of 2x along each row); nl.rms_norm of each row (unit weights). x [64, 40], m [64, 1] = row max of x."""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, m):
    p, n = x.shape
    o1 = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
    o2 = nl.ndarray((p, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    o3 = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
    o4 = nl.ndarray((p, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    o5 = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
    o6 = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    mt = nl.load(m)
    pred = nl.greater(t, 0.0, dtype=nl.uint8)
    sel = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    mx = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.select_reduce(dst=sel, predicate=pred, on_true=t, on_false=-1.0, reduce_res=mx,
                       reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=nl.maximum)
    nl.store(o1, value=sel)
    nl.store(o2, value=mx)
    ex = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    sm = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    neg = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=neg, data=mt, op0=nl.multiply, operand0=-1.0)
    nisa.activation(dst=ex, op=nl.exp, data=t, bias=neg, reduce_op=nl.add, reduce_res=sm)
    nl.store(o3, value=ex)
    nl.store(o4, value=sm)
    cs = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=cs, src=t, op0=nl.multiply, op1=nl.add, imm0=2.0)
    nl.store(o5, value=cs)
    ones = nl.full((p, n), 1.0, dtype=x.dtype, buffer=nl.sbuf)
    nl.store(o6, value=nl.rms_norm(t, ones, axis=1, n=n))
    return o1, o2, o3, o4, o5, o6
