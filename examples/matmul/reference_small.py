"""Matrix multiplication C = A @ B in float32.

Small (test) shape: M=256, K=256, N=1024.
The kernel receives A transposed (lhsT, [K, M]) so that the contraction axis K lies on the partitions.
NKIBench-style problem module: the caller seeds numpy before get_inputs().
"""
import numpy as np

M, K, N = 256, 256, 1024


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
