"""AdamW variant: the three passes fused into one, so the new moments stay in SBUF instead of being stored
and re-loaded from HBM, and scalar-times-tile-plus-tile steps use two-op tensor_scalar forms."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(p, g, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2):
    M, N = p.shape
    out = nl.ndarray((3, M, N), dtype=p.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            g_tile = nl.load(g[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            m_tile = nl.load(m[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            v_tile = nl.load(v[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            p_tile = nl.load(p[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            m_new = nl.add(nl.multiply(m_tile, beta1), nl.multiply(g_tile, 1.0 - beta1))
            nl.store(out[1, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=m_new)
            g_sq = nisa.activation(op=nl.square, data=g_tile, scale=(1.0 - beta2) ** 0.5)
            v_new = nl.add(nl.multiply(v_tile, beta2), g_sq)
            nl.store(out[2, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=v_new)
            denom = nisa.activation(op=nl.sqrt, data=v_new, scale=1.0 / bias_correction2)
            inv = nisa.reciprocal(nisa.tensor_scalar(denom, np.add, eps))
            step = nl.multiply(m_new, inv)
            decay = nisa.tensor_scalar(p_tile, np.multiply, 1.0 - lr * weight_decay)
            p_new = nl.subtract(decay, nl.multiply(step, lr / bias_correction1))
            nl.store(out[0, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=p_new)
    return out
