"""LayerNorm tutorial step 2 (our own kernel): the statistics with nisa.bn_stats over 512-column chunks and one
nisa.bn_aggr, and the shift and scale as a single two-operator nisa.tensor_scalar pass; gamma and beta as in
step 1. out = layernorm(x) * gamma + beta."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np

EPS = 1e-5
CHUNK = 512   # nl.tile_size.bn_stats_fmax


@nki.jit
def kernel(x, gamma, beta):
    rows, cols = x.shape
    chunks = (cols + CHUNK - 1) // CHUNK
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    gamma_rows = nl.load(gamma).broadcast_to((128, cols))
    beta_rows = nl.load(beta).broadcast_to((128, cols))
    for r in nl.affine_range(rows // 128):
        tile = nl.load(x[r * 128:(r + 1) * 128, :])
        stats = nl.ndarray((128, 6 * chunks), dtype=np.float32, buffer=nl.sbuf)
        for c in nl.affine_range(chunks):
            width = min(CHUNK, cols - c * CHUNK)
            stats[:, c * 6:(c + 1) * 6] = nisa.bn_stats(tile[:, c * CHUNK:c * CHUNK + width], dtype=np.float32)
        moments = nisa.bn_aggr(stats)                         # [128, 2]: mean, variance
        inv_std = nl.rsqrt(moments[:, 1:2] + EPS)
        normed = nisa.tensor_scalar(data=tile, op0=np.subtract, operand0=moments[:, 0:1],
                                    op1=np.multiply, operand1=inv_std)
        nl.store(out[r * 128:(r + 1) * 128, :], value=normed * gamma_rows + beta_rows)
    return out
