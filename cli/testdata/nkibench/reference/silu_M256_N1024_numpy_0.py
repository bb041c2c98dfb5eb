"""SiLU, y = x * sigmoid(x), float32, in the NKIBench reference layout (a test fixture of our own)."""
import numpy as np

M, N = 256, 1024


def get_inputs():
    return [np.random.randn(M, N).astype(np.float32)]


def forward(x):
    x64 = x.astype(np.float64)
    return (x64 / (1.0 + np.exp(-x64))).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return [inputs[0]]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
