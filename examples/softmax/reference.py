"""Row-wise softmax of x [M, N] (numerically stable: the row maximum is subtracted before exp), float32.

Realistic (benchmark) shape: M=4096, N=2048.
Rows map to partitions (128 rows per tile), columns to the free axis.
NKIBench-style problem module: the caller seeds numpy before get_inputs().
"""
import numpy as np

M, N = 4096, 2048


def get_inputs():
    return [np.random.randn(M, N).astype(np.float32) * np.float32(4.0)]


def forward(x):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return [inputs[0]]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
