"""Reference for corpus kernel simulation_mode_tiles.py."""
import numpy as np


def get_inputs():
    return [np.random.randn(64, 32).astype(np.float32)]


def forward(x):
    return x.T.copy(), x.T @ x


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k, r.shape) for k, r in zip(k_res, ref)]
