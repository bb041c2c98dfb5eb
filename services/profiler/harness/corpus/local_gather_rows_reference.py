"""Reference for corpus kernel local_gather_rows.py: the numpy semantics of the NKI API example."""
import numpy as np

ELEMENTS = 4


def get_inputs():
    src = np.random.randn(128, 64 * ELEMENTS).astype(np.float32)
    index = (np.random.randint(0, 64, size=(128, 1)) * ELEMENTS).astype(np.uint16)
    return [src, index]


def forward(src, index):
    out = np.zeros((2, 128, 16, ELEMENTS), dtype=np.float32)
    rows = src.reshape(128, 64, ELEMENTS)
    for first in range(0, 128, 16):
        picks = index[first:first + 16].flatten(order='F') // ELEMENTS
        out[0, first:first + 16] = rows[first:first + 16][:, picks]
        out[1, first:first + 16, 0:8] = rows[first:first + 16][:, picks[:8]]
    return out


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
