"""A problem outside the paper's list (no roofline formulas): y = 2x + 1, float32 (a test fixture of our own)."""
import numpy as np

M, N = 128, 512


def get_inputs():
    return [np.random.randn(M, N).astype(np.float32)]


def forward(x):
    return (2.0 * x.astype(np.float64) + 1.0).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return [inputs[0]]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
