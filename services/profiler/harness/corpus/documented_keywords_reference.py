"""Reference for corpus kernel documented_keywords.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(64, 32).astype(np.float32), np.random.randn(64, 32).astype(np.float32)]


def _bfloat16(x):
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def forward(a, b):
    scan = np.zeros_like(a)
    prev = np.ones(a.shape[0], np.float32)
    for i in range(a.shape[1]):
        prev = b[:, i] - (prev - a[:, i])
        scan[:, i] = prev
    sums = 0.5 + (2.0 * a).sum(axis=1, keepdims=True)
    return scan, a + b, sums.astype(np.float32), _bfloat16(a.T)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k, r):
    return [np.reshape(x, y.shape) for x, y in zip(k, r)]
