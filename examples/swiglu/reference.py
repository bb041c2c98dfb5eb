"""SwiGLU gate of a feed-forward block: out = silu(x @ Wg) * (x @ Wu), float32.

Realistic (benchmark) shape: M=2048, K=1024, N=2048.
The kernel receives x transposed (xT, [K, M]) so that K lies on the partitions, then Wg [K, N] and Wu [K, N].
NKIBench-style problem module: the caller seeds numpy before get_inputs().
"""
import numpy as np

M, K, N = 2048, 1024, 2048


def get_inputs():
    x = np.random.randn(M, K).astype(np.float32)
    wg = (np.random.randn(K, N) / np.sqrt(K)).astype(np.float32)
    wu = (np.random.randn(K, N) / np.sqrt(K)).astype(np.float32)
    return [x, wg, wu]


def forward(x, wg, wu):
    g = x.astype(np.float64) @ wg.astype(np.float64)
    u = x.astype(np.float64) @ wu.astype(np.float64)
    return (g / (1.0 + np.exp(-g)) * u).astype(np.float32)


def transform_to_nki_inputs(inputs):
    x, wg, wu = inputs
    return [np.ascontiguousarray(x.T), wg, wu]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
