"""Reference for corpus kernel fixed_addresses.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(128, 128).astype(np.float32), np.random.randn(128, 1024).astype(np.float32)]


def forward(a_t, b):
    return (a_t.T @ b) * 2


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
