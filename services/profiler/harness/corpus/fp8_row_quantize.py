"""Row-wise float8_e4m3 quantization with the dequantization scale packed beside each row: a bitcast to another
element size (`scale.view(nl.float8_e4m3)`: one float32 read as its 4 bytes).

out[r, :D] = fp8(x[r, :] / s[r]) with s[r] = max(|x[r, :]|) / 240, and out[r, D:D + 4] = the 4 bytes of the
float32 s[r] as float8_e4m3 values (a consumer reads them back with .view(nl.float32)); x [R, D] float32, R a
multiple of 128. A second output, the rows dequantized from the packed form (fp8 values times the scale read back
from its bytes), checks the round trip."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

FP8_MAX = 240.0


@nki.jit
def kernel(x):
    R, D = x.shape
    P = nl.tile_size.pmax
    packed = nl.ndarray((R, D + 4), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
    restored = nl.ndarray((R, D), dtype=nl.float32, buffer=nl.shared_hbm)
    for r in nl.affine_range(R // P):
        rows = nl.load(x[r * P:(r + 1) * P, :])
        peak = nisa.tensor_reduce(nl.max, nl.abs(rows), axis=[1], keepdims=True)
        scale = nl.multiply(peak, 1.0 / FP8_MAX)
        inverse = nisa.reciprocal(scale)
        quantized = nl.ndarray((P, D), dtype=nl.float8_e4m3, buffer=nl.sbuf)
        quantized[...] = nisa.tensor_scalar(rows, nl.multiply, inverse)
        nl.store(packed[r * P:(r + 1) * P, 0:D], value=quantized)
        nl.store(packed[r * P:(r + 1) * P, D:D + 4], value=scale.view(nl.float8_e4m3))

        # the consumer side: the packed row as it is in HBM, the scale read back from its bytes
        row = nl.load(packed[r * P:(r + 1) * P, :])
        unpacked = nl.copy(row[:, D:D + 4]).view(nl.float32)
        nl.store(restored[r * P:(r + 1) * P, :], value=nisa.tensor_scalar(row[:, 0:D], nl.multiply, unpacked,
                                                                          dtype=nl.float32))
    return packed, restored
