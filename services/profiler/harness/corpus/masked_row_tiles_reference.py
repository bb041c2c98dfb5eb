"""Reference for corpus kernel masked_row_tiles.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(200, 3, 8).astype(np.float32)]


def forward(x):
    return x / np.max(np.abs(x), axis=(1, 2), keepdims=True)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
