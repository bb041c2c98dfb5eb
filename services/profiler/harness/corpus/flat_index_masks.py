"""Masks over flattened indices: a 1-D vector processed as [128, 1] tiles, lin = i_p * FREE + i_f with
FREE = 1 (the form of Triton-to-NKI generated kernels), and fixed-size blocks of row tiles of which the last
lies wholly past the end of the input (its mask keeps nothing)."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def flat_index_masks(v, x):
    n = v.shape[0]
    rows, cols = x.shape
    out_v = nl.ndarray((n,), dtype=v.dtype, buffer=nl.shared_hbm)
    out_x = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for block in nl.affine_range((n + 127) // 128):
        i_p, i_f = nl.mgrid[0:128, 0:1]
        lin = i_p * 1 + i_f
        t = nl.load(v[block * 128 + lin], mask=block * 128 + lin < n)
        nl.store(out_v[block * 128 + lin], value=nl.add(t, 1.0), mask=block * 128 + lin < n)
    ti = nl.mgrid[0:128, 0:cols]
    blocks = nl.zeros((nl.par_dim(128), 4, cols), dtype=x.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(4):
        r = b * 128 + ti.p
        blocks[ti.p, b, ti.x] = nl.load(x[r, ti.x], mask=(r < rows) & (ti.x < cols))
    for b in nl.affine_range((rows + 127) // 128):
        r = b * 128 + ti.p
        nl.store(out_x[r, ti.x], value=nl.multiply(blocks[ti.p, b, ti.x], 2.0), mask=(r < rows))
    return out_v, out_x


kernel = flat_index_masks
