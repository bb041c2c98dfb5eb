"""ALU operators with one input, as the NKI API's "Supported Math Operators" table lists them (Reverse Square Root
nl.rsqrt, Reciprocal nl.reciprocal, Absolute nl.abs), in nisa.tensor_scalar with the scalar operand 0: an RMS scale
computed as `tensor_scalar(op0=nl.rsqrt, operand0=0.0)` on GpSimd (vllm-neuron's kda_output form), a reciprocal
chained with a subtract, and |x - 1| as op1. x [64, 48] -> out [64, 3, 48]."""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((64, 3, 48), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((64, 48), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    u = nl.ndarray((64, 3, 48), dtype=nl.float32, buffer=nl.sbuf)
    sq = nl.ndarray((64, 48), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=sq, data1=t, data2=t, op=nl.multiply)
    rstd = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=rstd, op=nl.add, data=sq, axis=1)
    nisa.tensor_scalar(dst=rstd, data=rstd, op0=nl.multiply, operand0=1.0 / 48, op1=nl.add, operand1=1e-6)
    nisa.tensor_scalar(dst=rstd, data=rstd, op0=nl.rsqrt, operand0=0.0, engine=nisa.engine.gpsimd)
    nisa.tensor_scalar(dst=u[:, 0, :], data=t, op0=nl.multiply, operand0=rstd)
    nisa.tensor_scalar(dst=u[:, 1, :], data=t, op0=nl.reciprocal, operand0=0.0, op1=nl.subtract, operand1=3.0)
    nisa.tensor_scalar(dst=u[:, 2, :], data=t, op0=nl.subtract, operand0=1.0, op1=nl.abs, operand1=0.0)
    nisa.dma_copy(dst=out, src=u)
    return out
