"""Access patterns built for every slot of a packed loop and used only under a guard (Beta 2, the form of the NKI
Library's output_projection_tkg): the loop runs over 4 slots of 64 columns, the tensor holds 3, and the pattern of
the last slot (reaching past the tensor) is built but never used. out = 2 * x for x [128, 192]."""
import nki
import nki.isa as nisa
import nki.language as nl

SLOT = 64
SLOTS_PER_PASS = 4


@nki.jit
def kernel(x):
    x_sb = nl.load(x)
    rows, width = x_sb.shape
    res = nl.ndarray(x_sb.shape, dtype=x_sb.dtype, buffer=nl.sbuf)
    for slot in range(SLOTS_PER_PASS):
        part = x_sb.ap(pattern=[[width, rows], [1, SLOT]], offset=slot * SLOT)
        if slot * SLOT < width:
            nisa.tensor_scalar(dst=res[:, slot * SLOT:(slot + 1) * SLOT], data=part, op0=nl.multiply, operand0=2.0)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=res)
    return out
