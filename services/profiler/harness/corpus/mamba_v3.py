"""Fused Mamba, third version (our own kernel in the steps of the NKI fused-mamba tutorial): mamba_v2 with the
sequence tiled into 512-element chunks as the innermost loop, so the per-state intermediates are [128, 512] tiles;
the scan of a chunk starts from the last column of the previous chunk's scan (`initial=`), a loop-carried chain
over a compile-time unrolled loop (`nl.static_range`, as the tutorial), and each chunk's product with C is written
to a PSUM tile before it is added to the accumulator (the tutorial's "PSUM buffer to reduce accumulation
latency"). Same computation and shapes as mamba_v1; seq_len a multiple of 512."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

CHUNK = 512


@nki.jit
def kernel(delta, u, a, b, c):
    batch, channels, seq_len = delta.shape
    states = a.shape[1]
    chunk = min(CHUNK, seq_len)
    out = nl.ndarray(delta.shape, dtype=delta.dtype, buffer=nl.shared_hbm)
    for bi in nl.affine_range(batch):
        for t in nl.affine_range(channels // 128):
            lo = t * 128
            total = nl.zeros((nl.par_dim(128), seq_len), dtype=delta.dtype, buffer=nl.sbuf)
            d = nl.load(delta[bi, lo:lo + 128, :])
            x = nl.load(u[bi, lo:lo + 128, :])
            for s in nl.affine_range(states):
                a_col = nl.load(a[lo:lo + 128, s:s + 1])
                b_row = nl.load(b[bi, s:s + 1, :])
                c_row = nl.load(c[bi, s:s + 1, :])
                carry = nl.zeros((nl.par_dim(128), 1), dtype=delta.dtype, buffer=nl.sbuf)
                for j in nl.static_range(seq_len // chunk):
                    cols = slice(j * chunk, (j + 1) * chunk)
                    decay = nisa.activation(op=nl.exp, data=d[0:128, cols], scale=a_col)
                    drive = nisa.tensor_tensor(nisa.tensor_tensor(d[0:128, cols], x[0:128, cols], op=nl.multiply),
                                               b_row[0:1, cols].broadcast_to((128, chunk)), op=nl.multiply)
                    h = nisa.tensor_tensor_scan(decay, drive, initial=carry, op0=np.multiply, op1=np.add)
                    carry[0:128, 0:1] = nl.copy(h[0:128, chunk - 1:chunk])
                    y = nl.ndarray((nl.par_dim(128), chunk), dtype=delta.dtype, buffer=nl.psum)
                    y[...] = nisa.tensor_tensor(h, c_row[0:1, cols].broadcast_to((128, chunk)), op=nl.multiply)
                    total[0:128, cols] += y
            nl.store(out[bi, lo:lo + 128, :], total)
    return out
