"""NKI 2.31-2.33 fused reductions, in the destination-passing style of the current API pages: a row softmax of
s = (x * 0.5) * w whose row maximum comes from scalar_tensor_tensor's reduce_op, negated by
tensor_scalar_reduce(reduce_res_negate=True), and whose exponentials and their row sums come from one
nisa.activation (bias = the negated maximum, reduce_op=nl.add into reduce_res). (The NeuronCore-v4 forms of those
pages, nisa.activate2 and nl.abs_max / abs_min, compile on neither trn1 nor trn2; tests/test_generations.py.)"""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, w):
    rows, cols = x.shape
    soft = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // 128):
        r = nl.ds(t * 128, 128)
        xt = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        wt = nl.ndarray((128, cols), dtype=w.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[r, :])
        nisa.dma_copy(dst=wt, src=w[r, :])
        s = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        row_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=s, data=xt, op0=nl.multiply, operand0=0.5, op1=nl.multiply, operand1=wt,
                                  reduce_op=nl.maximum, reduce_res=row_max)
        neg_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        unused = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=unused, data=row_max, op0=nl.add, operand0=0.0, reduce_op=nl.maximum,
                                  reduce_res=neg_max, reduce_res_negate=True)
        e = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        total = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=s, bias=neg_max, reduce_op=nl.add, reduce_res=total)
        res = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=res, data=e, op0=nl.divide, operand0=total)
        nisa.dma_copy(dst=soft[r, :], src=res)
    return soft
