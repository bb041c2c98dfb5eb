"""The NKI scheduling guide's forms and the tiling overview's float loop bound: instructions labelled with name=,
ordered by `kernel.with_schedule([(later, earlier)])` (an ordering hint), a `with nl.no_reorder():` block, and
`nl.affine_range(rows / nl.tile_size.pmax)` (a float of integral value). out = exp(x) * (1 / (x + 1)) per
128-row tile of x [256, 64]."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tiles(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows / nl.tile_size.pmax):
        r = nl.ds(t * 128, 128)
        xt = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[r, :], name=f"load{t}")
        shifted = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        inverse = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        e = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        with nl.no_reorder():
            nisa.tensor_scalar(dst=shifted, data=xt, op0=nl.add, operand0=1.0, name=f"shift{t}")
            nisa.reciprocal(dst=inverse, data=shifted, name=f"inverse{t}")
        nisa.activation(dst=e, op=nl.exp, data=xt, name=f"exp{t}")
        res = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=res, data1=e, data2=inverse, op=nl.multiply)
        nisa.dma_copy(dst=out[r, :], src=res)
    return out


kernel = tiles.with_schedule([("exp0", "inverse0"), ("exp1", ["inverse1", "exp0"])])
