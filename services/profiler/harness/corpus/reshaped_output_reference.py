"""Reference for corpus kernel reshaped_output.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(128, 64).astype(np.float32)]


def forward(x):
    return np.tanh(x).reshape(64, 128)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
