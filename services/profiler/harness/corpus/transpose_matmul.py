"""Tensor-engine transposes: nc_transpose assigned to SBUF, an unassigned PSUM transpose feeding a matmul, and
nl.transpose assigned to SBUF. out = 2 (a @ b).T + a @ b for a [128, 64], b [64, 128]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
    out = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
    a_tile = nl.load(a)                                   # [128, 64]
    b_tile = nl.load(b)                                   # [64, 128]
    a_t = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.sbuf)
    a_t[...] = nisa.nc_transpose(a_tile)                  # PE transpose assigned to SBUF
    first = nisa.nc_matmul(b_tile, a_t)                   # b.T @ a.T = (a @ b).T
    second = nisa.nc_matmul(nisa.nc_transpose(a_tile), b_tile)   # unassigned PSUM transpose: a @ b
    a_t2 = nl.transpose(a_tile)                           # nl.transpose, in SBUF
    third = nisa.nc_matmul(b_tile, a_t2)                  # (a @ b).T again
    total = nl.add(nl.add(first, third), second)
    nl.store(out, total)
    return out
