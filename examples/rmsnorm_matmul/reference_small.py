"""RMSNorm followed by a projection: out = (x / sqrt(mean(x**2, axis=1) + eps) * gamma) @ W, float32.

Small (test) shape: M=256, K=256, N=512.
The kernel receives x [M, K], gamma as a column [K, 1] (one scale per partition of a transposed tile) and W
[K, N].
NKIBench-style problem module: the caller seeds numpy before get_inputs().
"""
import numpy as np

M, K, N = 256, 256, 512
EPS = 1e-6


def get_inputs():
    x = np.random.randn(M, K).astype(np.float32)
    gamma = np.random.rand(K).astype(np.float32) + np.float32(0.5)
    w = (np.random.randn(K, N) / np.sqrt(K)).astype(np.float32)
    return [x, gamma, w]


def forward(x, gamma, w):
    x64 = x.astype(np.float64)
    rms = np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + EPS)
    return (((x64 / rms) * gamma.astype(np.float64)) @ w.astype(np.float64)).astype(np.float32)


def transform_to_nki_inputs(inputs):
    x, gamma, w = inputs
    return [x, gamma.reshape(K, 1), w]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
