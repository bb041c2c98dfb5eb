"""Host-side helpers public kernels import: a frozen dataclass of tiling options, functools.reduce over a shape,
operator.mul, typing names, getattr(nl, name) choosing a dtype by name (a public name: getattr never reaches a
private one), and nki.typing annotations (`x: nt.tensor[256, 96]`). x [256, 96]: out = x * 3 + 1, in 128-row
tiles."""
from dataclasses import dataclass
from functools import reduce
from operator import mul
from typing import Tuple

import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt


@dataclass(frozen=True)
class TileConfig:
    rows: int = 128
    scale: float = 3.0
    dtype_name: str = 'float32'


def element_count(shape: Tuple[int, ...]) -> int:
    return reduce(mul, shape, 1)


@nki.jit
def kernel(x: nt.tensor[256, 96], config=TileConfig()):
    out = nl.ndarray(x.shape, dtype=getattr(nl, config.dtype_name), buffer=nl.shared_hbm)
    assert element_count(x.shape) % config.rows == 0
    for t in nl.affine_range(x.shape[0] // config.rows):
        tile = nl.load(x[t * config.rows:(t + 1) * config.rows, :])
        nl.store(out[t * config.rows:(t + 1) * config.rows, :], value=nl.add(nl.multiply(tile, config.scale), 1.0))
    return out
