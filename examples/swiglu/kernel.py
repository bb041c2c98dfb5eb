"""Baseline SwiGLU kernel: out = silu(x @ Wg) * (x @ Wu), float32.

For each [128, 512] output tile, two PSUM accumulators (gate and up) over K; both are copied to SBUF, then
sigmoid (ACT) and two tensor-tensor multiplies (DVE) form the result.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(xT, wg, wu):
    K, M = xT.shape
    _, N = wg.shape
    out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            g_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            u_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                x_tile = nl.load(xT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                wg_tile = nl.load(wg[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                wu_tile = nl.load(wu[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                g_psum += nisa.nc_matmul(x_tile, wg_tile)
                u_psum += nisa.nc_matmul(x_tile, wu_tile)
            g = nl.copy(g_psum, dtype=nl.float32)
            u = nl.copy(u_psum, dtype=nl.float32)
            sig = nl.sigmoid(g)
            act = nl.multiply(g, sig)
            y = nl.multiply(act, u)
            nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=y)
    return out
