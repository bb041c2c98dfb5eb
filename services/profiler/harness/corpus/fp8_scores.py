"""Kernel inputs in fp8 and bfloat16 (the problem declares them: NKI_INPUT_DTYPES in the reference): attention-style
scores from pre-quantized float8_e4m3 operands, dequantized per row and offset by a bfloat16 bias.

scores[m, n] = (sum_k q_t[k, m] * k_mat[k, n]) * row_scale[m] + bias[m, n]
q_t [K, M] and k_mat [K, N] float8_e4m3 (values already on the fp8 grid, scaled into its range by the host),
row_scale [M, 1] float32 (the product of both dequantization scales), bias [M, N] bfloat16; out [M, N] float32.
The fp8 tiles go to TensorE as loaded (1-byte DMA elements), accumulate in fp32 PSUM over K, and VectorE applies
the scale and the bias on the way out of PSUM in one scalar_tensor_tensor."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(q_t, k_mat, row_scale, bias):
    assert q_t.dtype == nl.float8_e4m3 and k_mat.dtype == nl.float8_e4m3, 'operands must be pre-quantized fp8'
    assert bias.dtype == nl.bfloat16, 'the bias is a bfloat16 tensor'
    K, M = q_t.shape
    _, N = k_mat.shape
    TILE_K = nl.tile_size.pmax                   # 128
    TILE_N = nl.tile_size.gemm_moving_fmax       # 512
    assert M <= 128 and K % TILE_K == 0 and N % TILE_N == 0

    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    scale = nl.load(row_scale)                   # [M, 1] float32, one value per partition

    # the stationary operand does not depend on n: load its K tiles once
    q_tiles = nl.ndarray((K // TILE_K, nl.par_dim(TILE_K), M), dtype=q_t.dtype, buffer=nl.sbuf)
    for kt in nl.affine_range(K // TILE_K):
        q_tiles[kt] = nl.load(q_t[kt * TILE_K:(kt + 1) * TILE_K, :])

    for n in nl.affine_range(N // TILE_N):
        acc = nl.zeros((M, TILE_N), dtype=nl.float32, buffer=nl.psum)
        for kt in nl.affine_range(K // TILE_K):
            k_tile = nl.load(k_mat[kt * TILE_K:(kt + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
            acc += nisa.nc_matmul(q_tiles[kt], k_tile)
        bias_tile = nl.load(bias[:, n * TILE_N:(n + 1) * TILE_N])
        scores = nisa.scalar_tensor_tensor(data=acc, op0=nl.multiply, operand0=scale, op1=nl.add,
                                           operand1=bias_tile, dtype=nl.float32)
        nl.store(out[:, n * TILE_N:(n + 1) * TILE_N], value=scores)
    return out
