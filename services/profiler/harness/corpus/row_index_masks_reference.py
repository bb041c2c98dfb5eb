"""Reference for row_index_masks: sums of 4-row chunks of a (96, 10, 24) input (the last chunk has 2 rows)."""
import numpy as np


def get_inputs():
    return [np.random.randn(96, 10, 24).astype(np.float32)]


def forward(x):
    padded = np.concatenate([x, np.zeros((96, 2, 24), dtype=np.float32)], axis=1)
    return padded.reshape(96, 3, 4, 24).sum(axis=2)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k, r):
    return [np.reshape(k, r.shape)]
