"""Dynamic windows, Beta 1 style: windows of a tile picked and placed at offsets known only at run time.
The offsets arrive as kernel inputs and are loaded into SBUF; each one is read there by the copy instruction
itself, so the kernel never sees their values:
- `nisa.tensor_copy_dynamic_src(x_tile[:, nl.ds(start_tile[0, j], W)])` copies the W columns of every partition
  that begin at start j (a dynamic source);
- `nisa.tensor_copy_dynamic_dst(dst=result[i_p, i_f + place_tile[0, j]], src=...)` writes a window at column
  place j of the result (a dynamic destination; i_p, i_f from nl.mgrid give the static grid).
The windows are doubled on the way. The loop is a sequential_range: which columns a dynamic destination writes
is data, so the iterations are not declared independent.
out[:, places[j]:places[j] + W] = 2 * x[:, starts[j]:starts[j] + W]; columns no window reaches stay 0."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

W = 32      # window width (columns)


@nki.jit
def kernel(x, starts, places):
    rows, _ = x.shape
    n = starts.shape[1]
    out = nl.ndarray((rows, n * W), dtype=x.dtype, buffer=nl.shared_hbm)

    x_tile = nl.load(x)                             # [rows, width] in SBUF
    start_tile = nl.load(starts)                    # [1, n] int32 in SBUF: where each window begins in x
    place_tile = nl.load(places)                    # [1, n] int32 in SBUF: where each window goes in out
    result = nl.zeros((rows, n * W), dtype=x.dtype, buffer=nl.sbuf)
    i_p, i_f = nl.mgrid[0:rows, 0:W]

    for j in nl.sequential_range(n):
        window = nisa.tensor_copy_dynamic_src(x_tile[:, nl.ds(start_tile[0, j], W)])
        doubled = nl.multiply(window, 2.0)
        nisa.tensor_copy_dynamic_dst(dst=result[i_p, i_f + place_tile[0, j]], src=doubled)

    nl.store(out, value=result)
    return out
