"""Indirect DMA: an HBM tensor indexed with a tile of indices (`nl.load(t[idx_tile, i_f])`, a gather;
`nl.store(t[idx_tile, i_f], value=...)`, a scatter).

The index tile (in SBUF, one index per partition) replaces the partition axis of the access: partition p of the
transfer reaches element idx[p] of the indexed dimension, the other indices select the same elements in every
row. The view keeps the access of row 0 with a partition stride of 0 (its free geometry is that of every row);
the rows are applied when data moves. Its trace region is the whole tensor (which rows move is data, unknown to
the dependency tracking and to timing-only runs); the index tile is read by the DMA.
"""
from typing import Any, Tuple

import numpy as np

from .affine import Affine
from .errors import CompileError
from .views import View, subscript


class IndirectView(View):
    """`scalar`: one index for the whole access (`.ap(scalar_offset=...)`, a (1, 1) tile) added to a view whose
    partition axis keeps its own stride; else one index per partition (the partition stride is 0)."""
    __slots__ = ('index', 'row_stride', 'rows', 'scalar')

    def __init__(self, base: View, index: View, row_stride: int, rows: int, scalar: bool = False) -> None:
        super().__init__(base.tensor, base.block, base.offset, base.shape, base.strides)
        self.index = index
        self.row_stride = row_stride
        self.rows = rows
        self.scalar = scalar

    def region(self, window: Any, free: int) -> Tuple[int, int, int, int, Any]:
        return 0, 1, 0, self.tensor.parts * self.tensor.free, None

    def _offsets(self, window: Any) -> np.ndarray:
        """Flat element offsets of the window: [partitions, free elements...]."""
        index = self.index.array().reshape(-1)
        offset, shape = self.clip(window)
        lo = window[0][0] if window is not None else 0
        if self.scalar:
            picked = np.full(shape[0], index[0], dtype=np.int64)
        else:
            picked = index[lo:lo + shape[0]].astype(np.int64)
        if picked.size and (picked.min() < 0 or picked.max() >= self.rows):
            raise IndexError(f'indirect DMA: index {int(picked.min() if picked.min() < 0 else picked.max())} is '
                             f'out of bounds for a dimension of size {self.rows}')
        grid = np.zeros(1, dtype=np.int64)
        for n, s in zip(shape, self.strides):
            grid = (grid[:, None] + s * np.arange(n, dtype=np.int64)[None, :]).reshape(-1)
        return (offset + picked[:, None] * self.row_stride + grid.reshape(shape[0], -1)).reshape(shape)

    def array_over(self, data: np.ndarray, window: Any = None) -> np.ndarray:
        """The gathered window (a copy: write it back with scatter_over)."""
        return data[self._offsets(window)]

    def scatter_over(self, data: np.ndarray, values: Any, window: Any = None) -> None:
        data[self._offsets(window)] = values

    def combine(self, ufunc: Any, values: Any, window: Any = None) -> None:
        """data[rows] = ufunc(data[rows], values), applied once per index even where indices repeat (atomic)."""
        data = self.tensor.alloc_for(self.block).data.view(self.tensor.kind.storage)
        ufunc.at(data, self._offsets(window), values)

    def scatter(self, values: np.ndarray, window: Any = None) -> None:
        self.scatter_over(self.tensor.alloc_for(self.block).data, values, window)

    def __getitem__(self, key: Any) -> Any:
        raise CompileError('an indirect access (a tensor indexed with a tile of indices) cannot be indexed further')

    def ap(self, pattern: Any, offset: Any = 0, **kwargs: Any) -> View:
        raise CompileError('an indirect access (a tensor indexed with a tile of indices) has no access pattern')

    def __repr__(self):
        return f'IndirectView({self.tensor.name or "tensor"} shape={self.shape})'


def index_tile(index: Any) -> View:
    """The index tile of an indirect DMA as a view, checked: integers in SBUF, one per partition."""
    if not isinstance(index, View):
        if not hasattr(index, 'view') or not hasattr(index, 'buffer'):
            raise CompileError(f'the indices of an indirect DMA must be a tile in SBUF, not {type(index).__name__}')
        index = index.view()
    if not index.tensor.buffer.on_chip:
        raise CompileError('the indices of an indirect DMA must be a tile in SBUF (nl.load them first)')
    if index.tensor.kind.storage.kind not in 'iu':
        raise CompileError(f'the indices of an indirect DMA must be integers, not {index.tensor.kind.public}')
    if index.free_size != 1:
        raise CompileError(f'the index tile of an indirect DMA holds one index per partition ([P, 1]); '
                           f'got shape {index.shape}')
    return index


def indirect_access(tensor: Any, key: Tuple[Any, ...], tile_type: type) -> IndirectView:
    """`tensor[key]` where one element of key is a tile of indices (tile_type: Tensor or View)."""
    if tensor.buffer.on_chip:
        raise CompileError('indexing an on-chip tile with a tile of indices is not supported by the simulator '
                           '(indirect access is a DMA from HBM: nl.load(t[idx_tile, ...]) / nl.store)')
    positions = [i for i, k in enumerate(key) if isinstance(k, (tile_type, View))]
    if len(positions) != 1 or any(k is Ellipsis for k in key):
        raise CompileError('an indirect access indexes one dimension with a tile of indices (and no "...")')
    position = positions[0]
    index = index_tile(key[position])
    ndim = max([k.ndim for k in key if isinstance(k, Affine)] + [0])
    if ndim:
        ndim = max(ndim, 2)
        placeholder: Any = Affine(0, ((ndim - 1, 1, 1),), ndim)
    else:
        placeholder = slice(0, 1)
    resolved = key[:position] + (placeholder,) + key[position + 1:]
    offset, shape, strides, index_map, _ = subscript(tensor.inner_shape, tensor.inner_strides, 0, resolved)
    axes = index_map[position][2]
    if len(axes) != 1 or axes[0][0] != 0:
        raise CompileError('the index tile of an indirect DMA must select the partition (first) axis of the access')
    base = View(tensor, (), offset, (index.shape[0],) + tuple(shape[1:]), (0,) + tuple(strides[1:]))
    return IndirectView(base, index, tensor.inner_strides[position], tensor.inner_shape[position])
