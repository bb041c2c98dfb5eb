"""Rotary position embedding (rotate-half form) of x [S, H, D]: with x1 = x[..., :D/2], x2 = x[..., D/2:], out =
concat(x1*cos - x2*sin, x2*cos + x1*sin), cos/sin [S, D/2] shared by all heads, float32.

Small (test) shape: S=256, H=4, D=128.
The kernel receives x as [S, H*D] (heads contiguous per position), cos and sin as [S, D/2]; sequence positions
map to partitions.
NKIBench-style problem module: the caller seeds numpy before get_inputs().
"""
import numpy as np

S, H, D = 256, 4, 128


def get_inputs():
    x = np.random.randn(S, H, D).astype(np.float32)
    pos = np.arange(S, dtype=np.float64)[:, None]
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, D, 2, dtype=np.float64) / D))
    angles = pos * inv_freq[None, :]
    jitter = np.random.rand(1, D // 2) * 1e-3
    return [x, np.cos(angles + jitter).astype(np.float32), np.sin(angles + jitter).astype(np.float32)]


def forward(x, cos, sin):
    x64 = x.astype(np.float64)
    c = cos.astype(np.float64)[:, None, :]
    s = sin.astype(np.float64)[:, None, :]
    x1, x2 = x64[..., :D // 2], x64[..., D // 2:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).astype(np.float32)


def transform_to_nki_inputs(inputs):
    x, cos, sin = inputs
    return [x.reshape(S, H * D), cos, sin]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
