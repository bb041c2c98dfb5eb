"""nisa.tensor_tensor of a (128, 16) tile with a (128, 1, 16) broadcast access pattern (a TensorView-style
`.ap` with a stride-0 axis) and with a (128, 4, 4) tile: operands of equal partition size and equal elements per
partition pair element for element in row-major order."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, scale, y):
    out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.sbuf)
    s = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.sbuf)
    c = nl.ndarray((128, 4, 4), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=x)
    nisa.dma_copy(dst=s, src=scale)
    nisa.dma_copy(dst=c, src=y.reshape((128, 4, 4)))
    r = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=r, data1=a, data2=s.ap(pattern=[[1, 128], [1, 1], [0, 16]], offset=0), op=nl.multiply)
    t = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=t, data1=r, data2=c, op=nl.add)
    nisa.dma_copy(dst=out, src=t)
    return out
