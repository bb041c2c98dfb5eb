"""Reference for corpus kernel access_patterns.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(65, 32).astype(np.float32)]


def forward(x):
    h, w = x.shape
    pairs = x[:-1] + x[1:]
    pooled = pairs[:, 0::2] + pairs[:, 1::2]
    ramp = 100 * np.arange(h - 1)[:, None] + np.arange(w // 2)[None, :]
    total = (pooled + ramp).astype(np.float32)
    keep = np.arange(w // 2)[None, :] <= np.arange(h - 1)[:, None]
    return total, np.where(keep, total, -1e9).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k, r.shape) for k, r in zip(k_res, ref)]
