"""Reference for corpus kernel fused_reductions_233.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(256, 96).astype(np.float32), np.random.randn(256, 96).astype(np.float32)]


def forward(x, w):
    s = 0.5 * x * w
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
