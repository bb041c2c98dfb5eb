"""Reference for corpus kernel affine_folds.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(128, 512).astype(np.float32)]


def forward(x):
    m = x.max(axis=1)
    s = np.exp(x.astype(np.float64) - m[:, None]).sum(axis=1)
    return np.stack([m, s, 2 * x.astype(np.float64).sum(axis=1), m], axis=1).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
