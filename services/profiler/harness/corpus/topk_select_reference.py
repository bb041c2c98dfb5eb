"""Reference for corpus kernel topk_select.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(64, 100).astype(np.float32)]


def forward(s):
    order = np.argsort(-s, axis=1, kind='stable')[:, :16]
    values = np.take_along_axis(s, order, axis=1)
    kept = np.where(s >= values[:, 15:16], s, 0.0).astype(np.float32)
    return values, order.astype(np.uint32), kept, s[:, 10:30].max(axis=1, keepdims=True)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k, r.shape) for k, r in zip(k_res, ref)]
