"""Reference for corpus kernel dynamic_windows.py."""
import numpy as np

ROWS, WIDTH, N, W = 64, 96, 4, 32


def get_inputs():
    starts = np.random.randint(0, WIDTH - W + 1, size=(1, N)).astype(np.int32)
    places = (np.random.permutation(N) * W).reshape(1, N).astype(np.int32)
    return [np.random.randn(ROWS, WIDTH).astype(np.float32), starts, places]


def forward(x, starts, places):
    out = np.zeros((ROWS, N * W), dtype=np.float32)
    for j in range(N):
        out[:, places[0, j]:places[0, j] + W] = 2.0 * x[:, starts[0, j]:starts[0, j] + W]
    return out


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
