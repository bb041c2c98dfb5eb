"""Reference for hwdge_queues: softmax over rows of a + b, (96, 160)."""
import numpy as np


def get_inputs():
    return [np.random.randn(96, 160).astype(np.float32), np.random.randn(96, 160).astype(np.float32)]


def forward(a, b):
    s = a.astype(np.float64) + b
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k, r):
    return [np.reshape(k, r.shape)]
