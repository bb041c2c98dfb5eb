"""Reference for int_output_overhang: 2 * keys over 384 int32 keys (the kernel reads 320 + a 64-key tail), written
as five overlapping 128-element windows starting every 64 elements; the output's 64-element guard past the keys
stays unwritten and the transform keeps the first 320 elements."""
import numpy as np

N = 320


def get_inputs():
    keys = np.random.randint(-1000, 1000, size=(N + 64, 1)).astype(np.int32)
    return [keys, (np.arange(N // 64, dtype=np.int32) * 64).reshape(1, -1)]


def forward(keys, starts):
    return 2 * keys[:N]


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k, r):
    return [np.asarray(k)[:N].reshape(r.shape)]
