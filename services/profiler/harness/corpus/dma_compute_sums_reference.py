"""Reference for corpus kernel dma_compute_sums.py."""
import numpy as np


def get_inputs():
    ids = np.random.randint(0, 40, size=64).astype(np.int32)
    return [np.random.randn(128, 32).astype(np.float32), np.random.randn(128, 32).astype(np.float32),
            np.random.randn(40, 16).astype(np.float32), ids, np.random.randn(64, 16).astype(np.float32)]


def forward(x, r, table, ids, y):
    out = table.copy()
    np.add.at(out, ids, y)
    return x + r + 2.0 * x, out


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k, r.shape) for k, r in zip(k_res, ref)]
