import numpy as np


def get_inputs():
    return [np.random.normal(size=(128, 96)).astype(np.float32)]


def forward(x):
    bits = x.view(np.uint32)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.view(np.float32) * 3.0


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.asarray(k_res).reshape(np.asarray(ref).shape)]
