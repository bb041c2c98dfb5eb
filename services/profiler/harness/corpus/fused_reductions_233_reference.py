"""Reference for corpus kernel fused_reductions_233.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(256, 96).astype(np.float32), np.random.randn(256, 96).astype(np.float32)]


def forward(x, w):
    s = 0.5 * x * w
    e = np.exp(s - s.max(axis=1, keepdims=True))
    soft = e / e.sum(axis=1, keepdims=True)
    peak = np.take_along_axis(x, np.abs(x).argmax(axis=1)[:, None], axis=1)
    smaller = np.where(np.abs(x) < np.abs(w), x, w)
    return soft, peak, smaller


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(v, r.shape) for v, r in zip(k_res, ref)]
