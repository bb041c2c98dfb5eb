"""Reference for corpus kernel ap_scalar_offset_on_chip.py."""
import numpy as np

P, C, N, W = 64, 80, 4, 16


def get_inputs():
    starts = np.random.randint(0, C - W + 1, size=(1, N)).astype(np.int32)
    places = np.random.permutation(N).reshape(1, N).astype(np.int32)
    reverse = (N - 1 - np.arange(N)).reshape(1, N).astype(np.int32)
    return [np.random.randn(P, C).astype(np.float32), starts, places, reverse]


def forward(x, starts, places, reverse):
    result = np.zeros((P, N, W), dtype=np.float32)
    for j in range(N):
        result[:, places[0, j], :] = 0.5 * x[:, starts[0, j]:starts[0, j] + W]
    return np.concatenate([result[:, reverse[0, j], :] for j in range(N)], axis=1)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
