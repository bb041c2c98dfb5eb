"""Reference for corpus kernel dynamic_runs.py."""
import numpy as np

ROWS, D, N, P, W, M = 48, 8, 6, 32, 40, 7


def get_inputs():
    idx = np.random.randint(0, ROWS, size=(N, 1)).astype(np.int32)
    places = np.random.permutation(ROWS)[:N].reshape(N, 1).astype(np.int32)
    cols = np.random.randint(0, W, size=(1, M)).astype(np.int32)
    return [np.random.randn(1, ROWS, D).astype(np.float32), idx, places, np.random.randn(P, W).astype(np.float32),
            cols]


def forward(table, idx, places, x, cols):
    table_out = np.zeros((1, ROWS, D), dtype=np.float32)
    table_out[0, places[:, 0], :] = 3.0 * table[0, idx[:, 0], :]
    return table_out, x[:, cols[0]]


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k, r.shape) for k, r in zip(k_res, ref)]
