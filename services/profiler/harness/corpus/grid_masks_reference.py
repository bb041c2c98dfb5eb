"""Reference for corpus kernel grid_masks.py."""
import math

import numpy as np


def get_inputs():
    return [np.random.randn(160, 192).astype(np.float32)]


def forward(x):
    normed = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    erf = np.vectorize(math.erf)
    gelu = 0.5 * normed * (1.0 + erf(normed / math.sqrt(2.0)))
    padded = np.pad(x, ((0, 0), (1, 1)), constant_values=-np.inf)
    pooled = np.maximum(np.maximum(padded[:, :-2], padded[:, 1:-1]), padded[:, 2:])
    return gelu.astype(np.float32), pooled


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k, r.shape) for k, r in zip(k_res, ref)]
