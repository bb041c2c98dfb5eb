"""Reference for corpus kernel bn_stats_masked.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(128, 96).astype(np.float32)]


def forward(x):
    return np.stack([x[:, :64].mean(axis=1), x[:, :64].var(axis=1)], axis=1)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
