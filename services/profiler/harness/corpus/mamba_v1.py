"""Fused Mamba, first version (our own kernel in the steps of the NKI fused-mamba tutorial): per batch, the state
loop outside the channel-tile loop. For every (state, 128-channel tile): exp(delta * A) on ScalarE (steps 1-2 in one
activation), delta * u * B on VectorE (step 3), the associative scan over the sequence (step 4), times C (step 5),
accumulated over states in an SBUF buffer holding every channel tile (step 6). delta and u tiles are loaded again for
every state. Shapes: delta, u [batch, channels, seq_len]; A [channels, state_size]; B, C [batch, state_size, seq_len]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(delta, u, a, b, c):
    batch, channels, seq_len = delta.shape
    states = a.shape[1]
    tiles = channels // 128
    out = nl.ndarray(delta.shape, dtype=delta.dtype, buffer=nl.shared_hbm)
    for bi in nl.affine_range(batch):
        total = nl.zeros((tiles, nl.par_dim(128), seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        for s in nl.affine_range(states):
            for t in nl.affine_range(tiles):
                lo = t * 128
                d = nl.load(delta[bi, lo:lo + 128, :])
                x = nl.load(u[bi, lo:lo + 128, :])
                a_col = nl.load(a[lo:lo + 128, s:s + 1])
                decay = nisa.activation(op=nl.exp, data=d, scale=a_col)
                b_row = nl.load(b[bi, s:s + 1, :])
                drive = nisa.tensor_tensor(nisa.tensor_tensor(d, x, op=nl.multiply),
                                           b_row.broadcast_to((128, seq_len)), op=nl.multiply)
                h = nisa.tensor_tensor_scan(decay, drive, initial=0, op0=np.multiply, op1=np.add)
                c_row = nl.load(c[bi, s:s + 1, :])
                y = nisa.tensor_tensor(h, c_row.broadcast_to((128, seq_len)), op=nl.multiply)
                total[t, 0:128, 0:seq_len] += y
        for t in nl.affine_range(tiles):
            nl.store(out[bi, t * 128:(t + 1) * 128, :], total[t, 0:128, 0:seq_len])
    return out
