"""Softmax variant: the negated row max comes straight out of the reduction (negate=True), the subtraction
is folded into the exp activation as its per-row bias (one ACT instruction instead of a DVE subtraction and
an ACT exp), and the normalising multiply is a tensor_scalar that the scheduler may place on ACT or DVE."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        neg_max = nisa.tensor_reduce(np.max, x_tile, axis=[1], negate=True, keepdims=True)
        e = nisa.activation(op=nl.exp, data=x_tile, bias=neg_max)
        row_sum = nisa.tensor_reduce(np.add, e, axis=[1], keepdims=True)
        inv = nisa.reciprocal(row_sum)
        y = nisa.tensor_scalar(e, np.multiply, inv)
        nl.store(out[i * 128:(i + 1) * 128, :], value=y)
    return out
