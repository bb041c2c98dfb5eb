"""Baseline AdamW step kernel, float32, in three passes over [128, 512] tiles.

Pass 1 updates the first moment, pass 2 the second moment, pass 3 reads both back from the output tensor
and updates the parameter. out[0] = p, out[1] = m, out[2] = v.
"""
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
            m_scaled = nl.multiply(m_tile, beta1)
            g_scaled = nl.multiply(g_tile, 1.0 - beta1)
            m_new = nl.add(m_scaled, g_scaled)
            nl.store(out[1, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=m_new)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            g_tile = nl.load(g[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            v_tile = nl.load(v[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            g_sq = nl.multiply(g_tile, g_tile)
            v_scaled = nl.multiply(v_tile, beta2)
            g_sq_scaled = nl.multiply(g_sq, 1.0 - beta2)
            v_new = nl.add(v_scaled, g_sq_scaled)
            nl.store(out[2, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=v_new)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            p_tile = nl.load(p[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            m_new = nl.load(out[1, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            v_new = nl.load(out[2, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            denom = nisa.activation(op=nl.sqrt, data=v_new, scale=1.0 / bias_correction2)
            denom = nl.add(denom, eps)
            inv = nisa.reciprocal(denom)
            step = nl.multiply(m_new, inv)
            step = nl.multiply(step, 1.0 / bias_correction1)
            decay = nl.multiply(p_tile, weight_decay)
            update = nl.add(step, decay)
            update = nl.multiply(update, lr)
            p_new = nl.subtract(p_tile, update)
            nl.store(out[0, i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=p_new)
    return out
