"""One AdamW optimizer step on a [M, N] parameter: m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g; p = p -
lr*((m/bc1) / (sqrt(v/bc2) + eps) + wd*p), with bias corrections bc1 = 1-b1**t, bc2 = 1-b2**t. float32. The
output stacks the new state: out[0] = p, out[1] = m, out[2] = v.

Realistic (benchmark) shape: M=2048, N=2048.
The kernel receives p, g, m, v [M, N] and the hyper-parameters as Python floats (lr, beta1, beta2, eps,
weight_decay, bias_correction1, bias_correction2); it returns a [3, M, N] tensor.
NKIBench-style problem module: the caller seeds numpy before get_inputs().
"""
import numpy as np

M, N = 2048, 2048
LR, BETA1, BETA2, EPS, WEIGHT_DECAY, STEP = 1e-3, 0.9, 0.999, 1e-8, 0.01, 10


def get_inputs():
    p = np.random.randn(M, N).astype(np.float32)
    g = np.random.randn(M, N).astype(np.float32)
    m = (np.random.randn(M, N) * 0.1).astype(np.float32)
    v = (np.random.rand(M, N) * 0.01).astype(np.float32)
    return [p, g, m, v]


def forward(p, g, m, v):
    p, g, m, v = (a.astype(np.float64) for a in (p, g, m, v))
    m_new = BETA1 * m + (1.0 - BETA1) * g
    v_new = BETA2 * v + (1.0 - BETA2) * g * g
    m_hat = m_new / (1.0 - BETA1 ** STEP)
    v_hat = v_new / (1.0 - BETA2 ** STEP)
    p_new = p - LR * (m_hat / (np.sqrt(v_hat) + EPS) + WEIGHT_DECAY * p)
    return np.stack([p_new, m_new, v_new]).astype(np.float32)


def transform_to_nki_inputs(inputs):
    return list(inputs) + [LR, BETA1, BETA2, EPS, WEIGHT_DECAY, 1.0 - BETA1 ** STEP, 1.0 - BETA2 ** STEP]


def transform_nki_outputs(kernel_out, ref_out):
    return np.asarray(kernel_out).reshape(ref_out.shape)
