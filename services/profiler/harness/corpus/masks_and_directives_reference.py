"""Reference for corpus kernel masks_and_directives.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(200, 64).astype(np.float32)]


def forward(x):
    return np.exp(x)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
