"""A projection tiled by a configuration object, in the NKI Library's style: a @dataclass tiling record whose
subtile field names its own class in a string annotation (`"Optional[TiledDim]"`), and a dtype-size table that
lists the packed MX dtypes beside float32 (named and compared only; this kernel never allocates one).
out[s, h] = x[s, :] @ w[:, h] + bias[0, h], S 200 in S subtiles of 128 and 72, H 640 in H tiles of 512 and 128."""
from dataclasses import dataclass
from typing import Optional

import nki
import nki.isa as nisa
import nki.language as nl


@dataclass
class TiledDim(nl.NKIObject):
    size: int
    tile: int
    count: int
    subtiles: "Optional[TiledDim]" = None

    @staticmethod
    def build(size: int, tile: int, subtile: int = 0) -> "TiledDim":
        inner = TiledDim(tile, subtile, (tile + subtile - 1) // subtile) if subtile else None
        return TiledDim(size, tile, (size + tile - 1) // tile, inner)

    def bound(self, index: int) -> int:
        return min(self.tile, self.size - index * self.tile)


def dtype_bytes(dtype) -> int:
    if dtype in (nl.float32, nl.float8_e4m3fn_x4):
        return 4
    if dtype in (nl.bfloat16, nl.float16, nl.float4_e2m1fn_x4):
        return 2
    return 1


@nki.jit
def kernel(x_t, w, bias):
    k_size, s_size = x_t.shape
    h_size = w.shape[1]
    assert dtype_bytes(w.dtype) * k_size * h_size <= 4 * 1024 * 1024
    s_dim = TiledDim.build(s_size, 128)
    h_dim = TiledDim.build(h_size, 512)
    out = nl.ndarray((s_size, h_size), dtype=x_t.dtype, buffer=nl.shared_hbm)

    x_sb = nl.ndarray((k_size, s_size), dtype=x_t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x_t)
    w_sb = nl.ndarray((k_size, h_size), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w_sb, src=w)
    b_sb = nl.ndarray((128, h_size), dtype=bias.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_sb, src=bias.ap(pattern=[[0, 128], [1, h_size]], offset=0))

    for si in range(s_dim.count):
        rows = s_dim.bound(si)
        for hi in range(h_dim.count):
            cols = h_dim.bound(hi)
            acc = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(acc, x_sb[:, nl.ds(si * 128, rows)], w_sb[:, nl.ds(hi * 512, cols)])
            res = nl.ndarray((rows, cols), dtype=x_t.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(res, acc, b_sb[:rows, nl.ds(hi * 512, cols)], nl.add)
            nisa.dma_copy(dst=out[nl.ds(si * 128, rows), nl.ds(hi * 512, cols)], src=res)
    return out
