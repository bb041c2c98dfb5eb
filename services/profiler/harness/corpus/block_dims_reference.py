"""Reference for corpus kernel block_dims.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(4, 128, 32).astype(np.float32)]


def forward(x):
    return x.sum(axis=0) * 0.5


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
