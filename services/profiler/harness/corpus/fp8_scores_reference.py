"""Reference for corpus kernel fp8_scores.py. The kernel takes q_t and k_mat in float8_e4m3 and the bias in
bfloat16: NKI_INPUT_DTYPES declares them, and the harness rounds those inputs onto the formats' grids in place
before `forward` runs, so the reference computes on exactly the values the kernel gets (the default tolerance
applies)."""
import numpy as np

K, M, N = 256, 128, 1024
NKI_INPUT_DTYPES = ['float8_e4m3', 'float8_e4m3', None, 'bfloat16']
FP8_MAX = 240.0


def get_inputs():
    q = np.random.randn(M, K).astype(np.float32)
    k = np.random.randn(K, N).astype(np.float32)
    q_scale = np.abs(q).max(axis=1, keepdims=True) / FP8_MAX        # per row of q
    k_scale = np.abs(k).max() / FP8_MAX                             # per tensor
    q_t = np.ascontiguousarray((q / q_scale).T)
    bias = (8.0 * np.random.randn(M, N)).astype(np.float32)
    return [q_t, (k / k_scale).astype(np.float32), (q_scale * k_scale).astype(np.float32), bias]


def forward(q_t, k_mat, row_scale, bias):
    return (q_t.astype(np.float64).T @ k_mat.astype(np.float64) * row_scale + bias).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
