"""NKI 2.31-2.33 fused reductions (NeuronCore-v4 forms), in the destination-passing style of the current API pages:
a row softmax of s = (x * 0.5) * w whose row maximum comes from scalar_tensor_tensor's reduce_op, negated by
tensor_scalar_reduce(reduce_res_negate=True), and whose exponentials and their row sums come from one
nisa.activate2 (op0=nl.add of the negated maximum, op1=nl.bypass, reduce_op=nl.add); the signed entry of largest
magnitude of each row of x (activate2 with both stages bypassed, reduce_op=nl.abs_max) and nl.abs_min(x, w)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, w):
    rows, cols = x.shape
    soft = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    peak = nl.ndarray((rows, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    smaller = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
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
        nisa.activate2(dst=e, op=nl.exp, data=s, imm0=neg_max, imm1=0.0, op0=nl.add, op1=nl.bypass,
                       reduce_op=nl.add, reduce_res=total, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        res = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=res, data=e, op0=nl.divide, operand0=total)
        nisa.dma_copy(dst=soft[r, :], src=res)
        copied = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        largest = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.activate2(dst=copied, op=nl.copy, data=xt, imm0=0.0, imm1=0.0, op0=nl.bypass, op1=nl.bypass,
                       reduce_op=nl.abs_max, reduce_res=largest, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nisa.dma_copy(dst=peak[r, :], src=largest)
        low = nl.abs_min(xt, wt)
        nisa.dma_copy(dst=smaller[r, :], src=low)
    return soft, peak, smaller
