"""Reference for corpus kernel guarded_patterns.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(128, 192).astype(np.float32)]


def forward(x):
    return 2.0 * x


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
