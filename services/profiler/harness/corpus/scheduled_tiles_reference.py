"""Reference for corpus kernel scheduled_tiles.py."""
import numpy as np


def get_inputs():
    return [np.random.rand(256, 64).astype(np.float32)]


def forward(x):
    return np.exp(x) / (x + 1.0)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
