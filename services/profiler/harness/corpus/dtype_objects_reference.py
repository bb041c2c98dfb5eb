"""Reference for corpus kernel dtype_objects.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(128, 256).astype(np.float32)]


def forward(x):
    return np.maximum(x.max(axis=1, keepdims=True), 0.5)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
