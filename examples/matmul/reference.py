"""Matrix multiplication C = A @ B in float32.

Realistic (benchmark) shape: M=2048, K=2048, N=2048.
The kernel receives A transposed (lhsT, [K, M]) so that the contraction axis K lies on the partitions.
NKIBench-style problem module: the caller seeds numpy before get_inputs().
"""
import numpy as np

M, K, N = 2048, 2048, 2048


def get_inputs():
    a = np.random.randn(M, K).astype(np.float32)
    b = np.random.randn(K, N).astype(np.float32)
    return [a, b]


def forward(a, b):
    return np.matmul(a, b)


def transform_to_nki_inputs(inputs):
    a, b = inputs
    return [np.ascontiguousarray(a.T), b]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
