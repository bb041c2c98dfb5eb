"""Fused Mamba in the form of AccelOpt's published best kernel for the NKIBench mamba task (our own kernel): the
sequence in 512-element tiles as the outermost, sequential loop; inside it the channel tiles (delta and u loaded
once per channel tile and sequence tile) and then the states, with one accumulator per channel tile; each state's
scan starts from the last column of the previous sequence tile's scan, kept in an SBUF array [channel tiles, 128,
states]. Same computation and shapes as mamba_v1 (whose reference it shares); seq_len a multiple of 512."""
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
    tiles = channels // 128
    out = nl.ndarray(delta.shape, dtype=delta.dtype, buffer=nl.shared_hbm)
    for bi in nl.affine_range(batch):
        carry = nl.zeros((tiles, nl.par_dim(128), states), dtype=delta.dtype, buffer=nl.sbuf)
        for j in nl.sequential_range(seq_len // chunk):
            cols = slice(j * chunk, (j + 1) * chunk)
            for t in nl.affine_range(tiles):
                lo = t * 128
                total = nl.zeros((nl.par_dim(128), chunk), dtype=delta.dtype, buffer=nl.sbuf)
                d = nl.load(delta[bi, lo:lo + 128, cols])
                x = nl.load(u[bi, lo:lo + 128, cols])
                for s in nl.affine_range(states):
                    a_col = nl.load(a[lo:lo + 128, s:s + 1])
                    decay = nisa.activation(op=nl.exp, data=d, scale=a_col)
                    b_row = nl.load(b[bi, s:s + 1, cols])
                    drive = nisa.tensor_tensor(nisa.tensor_tensor(d, x, op=nl.multiply),
                                               b_row.broadcast_to((128, chunk)), op=nl.multiply)
                    h = nisa.tensor_tensor_scan(decay, drive, initial=carry[t, 0:128, s:s + 1], op0=np.multiply,
                                                op1=np.add)
                    carry[t, 0:128, s:s + 1] = nl.copy(h[0:128, chunk - 1:chunk])
                    c_row = nl.load(c[bi, s:s + 1, cols])
                    total[0:128, 0:chunk] += nisa.tensor_tensor(h, c_row.broadcast_to((128, chunk)), op=nl.multiply)
                nl.store(out[bi, lo:lo + 128, cols], total)
    return out
