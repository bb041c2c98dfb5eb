"""NKI 0.6 hardware descriptor generation: dma_copy with dge_mode=nisa.dge_mode.hwdge, its loads split over the
Sync and Scalar engines' queues (engine=nisa.engine.sync / nisa.engine.scalar), then a softmax over rows."""
import nki
import nki.isa as nisa
import nki.language as nl

HW = nisa.dge_mode.hwdge


@nki.jit
def hwdge_queues(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    a_sb = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
    b_sb = nl.ndarray((rows, cols), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_sb, src=a, dge_mode=HW, engine=nisa.engine.sync)
    nisa.dma_copy(dst=b_sb, src=b, dge_mode=HW, engine=nisa.engine.scalar)
    s = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s, data1=a_sb, data2=b_sb, op=nl.add)
    neg_max = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=s, axis=1, negate=True)
    p = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    total = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=p, op=nl.exp, data=s, bias=neg_max, reduce_op=nl.add, reduce_res=total)
    inv = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=total)
    o = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=o, data=p, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=o, dge_mode=HW, engine=nisa.engine.sync)
    return out


kernel = hwdge_queues
