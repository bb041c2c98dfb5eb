"""Reference for corpus kernel padded_rows.py: only the valid rows are compared."""
import numpy as np

VALID = 90


def get_inputs():
    x = np.zeros((128, 128), np.float32)
    x[:VALID] = np.random.randn(VALID, 128) * 0.5
    return [x, np.random.randn(128, 64).astype(np.float32)]


def forward(x, w):
    return (np.exp(x[:VALID].astype(np.float64)) @ w).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return list(inputs) + [VALID]


def transform_nki_outputs(k_res, ref):
    return [np.asarray(k_res)[:VALID]]
