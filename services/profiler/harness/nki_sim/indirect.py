"""Indirect DMA: an HBM tensor indexed with a tile of indices (`nl.load(t[idx_tile, i_f])`, a gather;
`nl.store(t[idx_tile, i_f], value=...)`, a scatter).

The index tile (in SBUF, one index per partition) replaces the partition axis of the access: partition p of the
transfer reaches element idx[p] of the indexed dimension, the other indices select the same elements in every
row. The view keeps the access of row 0 with a partition stride of 0 (its free geometry is that of every row);
the rows are applied when data moves. Its trace region is the whole tensor (which rows move is data, unknown to
the dependency tracking and to timing-only runs); the index tile is read by the DMA.

A single index ([1, 1] tile) in a subscript of slices and integers is a dynamic start address (nisa.dma_copy:
"the src and dst tensors can have a dynamic start address"): it indexes its dimension as an integer would, so
`nl.load(cache[tbl[i, j], :, h, :])` is the [block, d] tile at row tbl[i, j] (`scalar` views; a subscript that
would leave a 1-D access keeps the row-gather form, a [1, ...] tile).
"""
import math
from typing import Any, Tuple, cast

import numpy as np

from .affine import Affine, DynamicIndex
from .errors import CompileError
from .views import DYNAMIC_ACCESS, View, extent, subscript


class IndirectView(View):
    """`scalar`: one index for the whole access (`.ap(scalar_offset=...)`, a (1, 1) tile) added to a view whose
    partition axis keeps its own stride; else one index per partition (the partition stride is 0)."""
    __slots__ = ('index', 'row_stride', 'rows', 'scalar', 'skip')

    def __init__(self, base: View, index: View, row_stride: int, rows: int, scalar: bool = False) -> None:
        super().__init__(base.tensor, base.block, base.offset, base.shape, base.strides)
        self.index = index
        self.row_stride = row_stride
        self.rows = rows
        self.scalar = scalar
        self.skip = False       # oob_mode.skip: a dma_copy scatter destination, a dma_compute indirect access

    def region(self, window: Any, free: int) -> Tuple[int, int, int, int, Any]:
        return 0, 1, 0, self.tensor.parts * self.tensor.free, None

    def is_indirect(self) -> bool:
        """`t.is_indirect()` of a view with runtime offsets (`.ap(scalar_offset=/vector_offset=)`, vector_select)."""
        return True

    def _reshaped(self, shape: Any, strides: Any, offset: int = 0) -> View:
        """A view primitive (permute, slice, select, reshape_dim, rearrange, ...) of this view would be a plain view
        of the base tensor, without the runtime offsets: refused rather than read at the wrong address (the
        NkiTensor page: "Indirect views cannot be re-indirected, and the dimension that participates in the
        indirection cannot be further sliced or selected")."""
        raise CompileError('a view (permute, slice, select, reshape_dim, rearrange, ...) of an indirect view '
                           '(vector_select, a dynamic select, .ap(scalar_offset= / vector_offset=)) is not modelled '
                           'by the simulator; apply the view to the tensor before the indirection')

    def _picked(self, window: Any) -> Tuple[int, Tuple[int, ...], np.ndarray]:
        """(offset, shape) of the clipped window and the indices it uses: one for a scalar index, else one per
        partition of the window."""
        index = self.index.array()
        index = index.reshape(index.shape[0], -1).T.reshape(-1)    # column after column (GatherTransposeView)
        offset, shape = self.clip(window)
        lo = window[0][0] if window is not None else 0
        picked = index[:1] if self.scalar else index[lo:lo + shape[0]]
        return offset, shape, picked.astype(np.int64)

    def _offsets(self, window: Any) -> np.ndarray:
        """Flat element offsets of the window: [partitions, free elements...]."""
        offset, shape, picked = self._picked(window)
        if self.skip:            # out-of-bounds rows address row 0 here; scatter_over leaves them unwritten
            picked = np.where((picked < 0) | (picked >= self.rows), 0, picked)
        if picked.size and (picked.min() < 0 or picked.max() >= self.rows):
            bad = int(picked.min() if picked.min() < 0 else picked.max())
            size = self.rows
            shape = tuple(int(n) for n in self.tensor.inner_shape)
            if self.row_stride == math.prod(shape[1:]) and self.rows < shape[0]:
                # rows of the outer dimension (`.ap(vector_offset=)`): `rows` counts the indices whose whole access
                # stays inside the tensor, fewer than its rows when the pattern is wider than a row
                size = shape[0]
                if 0 <= bad < size:
                    raise IndexError(f'indirect DMA: index {bad} is out of bounds: the tensor has {size} rows, but '
                                     f'the access of row {bad} runs past the tensor\'s end; indices 0 to '
                                     f'{self.rows - 1} keep the access inside')
            raise IndexError(f'indirect DMA: index {bad} is out of bounds for a dimension of size {size}')
        if self.scalar:      # one dynamic start address; the partition axis keeps its own stride
            grid = np.zeros(1, dtype=np.int64)
            for n, s in zip(shape, self.strides):
                grid = (grid[:, None] + s * np.arange(n, dtype=np.int64)[None, :]).reshape(-1)
            return (offset + int(picked[0]) * self.row_stride + grid).reshape(shape)
        free = np.zeros(1, dtype=np.int64)
        for n, s in zip(shape[1:], self.strides[1:]):
            free = (free[:, None] + s * np.arange(n, dtype=np.int64)[None, :]).reshape(-1)
        return (offset + picked[:, None] * self.row_stride + free[None, :]).reshape(shape)

    def array_over(self, data: np.ndarray, window: Any = None) -> np.ndarray:
        """The gathered window (a copy: write it back with scatter_over)."""
        return data[self._offsets(window)]

    def kept(self, window: Any = None) -> np.ndarray:
        """Per partition of the window (one value for a scalar index): is its index in bounds?"""
        _, _, picked = self._picked(window)
        return (picked >= 0) & (picked < self.rows)

    def scatter_over(self, data: np.ndarray, values: Any, window: Any = None) -> None:
        offsets = self._offsets(window)
        if self.skip:            # oob_mode.skip: "Silently skip the runtime out-of-bounds access"
            kept = self.kept(window)
            values = np.broadcast_to(values, offsets.shape)
            if self.scalar:
                if kept[0]:
                    data[offsets] = values
                return
            data[offsets[kept]] = values[kept]
            return
        data[offsets] = values

    def combine(self, ufunc: Any, values: Any, window: Any = None) -> None:
        """data[rows] = ufunc(data[rows], values), applied once per index even where indices repeat (atomic); the
        updated elements are then rounded to the tensor's format (bfloat16, fp8), as every write is."""
        kind = self.tensor.kind
        data = self.tensor.alloc_for(self.block).data.view(kind.storage)
        offsets = self._offsets(window)
        if self.skip:            # oob_mode.skip (nisa.dma_compute): rows whose index is out of bounds are not updated
            kept = self.kept(window)
            if self.scalar:
                if not kept[0]:
                    return
            else:
                values = np.broadcast_to(values, offsets.shape)[kept]
                offsets = offsets[kept]
        ufunc.at(data, offsets, values)
        if kind.rounding is not None:
            data[offsets] = kind.rounding(data[offsets])

    def scatter(self, values: np.ndarray, window: Any = None) -> None:
        self.scatter_over(self.tensor.alloc_for(self.block).data, values, window)

    def __getitem__(self, key: Any) -> Any:
        raise CompileError('an indirect access (a tensor indexed with a tile of indices) cannot be indexed further')

    def ap(self, pattern: Any, offset: Any = 0, **kwargs: Any) -> View:
        raise CompileError('an indirect access (a tensor indexed with a tile of indices) has no access pattern')

    def __repr__(self):
        return f'IndirectView({self.tensor.name or "tensor"} shape={self.shape})'


# "When indices.shape[1] > 1: indices.shape[0] must be exactly 128" (nki.isa.dma_transpose)
INDEX_PARTITIONS = 128


class GatherTransposeView(IndirectView):
    """`t.ap(pattern, vector_offset=idx, indirect_dim=0)` with an index tile of several columns ([128, N]), or of
    more partitions than the pattern has rows: the source of nisa.dma_transpose's indirect transpose (a software-DGE
    dma_gather_transpose), whose API page reads the rows as `flat_indices = indices.T.flatten()[:src.shape[0]]`
    (column after column; IndirectView._picked). Only dma_transpose reads it (it sets `allowed`); every other
    indirect DMA takes one index per row of the access."""
    __slots__ = ('allowed',)

    def __init__(self, base: View, index: View, row_stride: int, rows: int) -> None:
        super().__init__(base, index, row_stride, rows)
        self.allowed = False

    def __repr__(self):
        return f'GatherTransposeView({self.tensor.name or "tensor"} shape={self.shape})'


def gather_transpose_refusal(view: GatherTransposeView) -> str:
    return (f'the index tile of an indirect DMA holds one index per row of the access ([{view.shape[0]}, 1]); got '
            f'shape {view.index.shape}: an index tile of several columns or of more rows is read only by '
            'nisa.dma_transpose\'s indirect transpose ("indices.shape[0] * indices.shape[1] must be >= src.shape[0]", '
            'nki.isa.dma_transpose)')


def index_tile(index: Any, columns: bool = False) -> View:
    """The index tile of an indirect DMA as a view, checked: integers in SBUF, one per partition (`columns`: a
    2-D [P, N] tile of several indices per partition is allowed too, the indirect transpose's)."""
    if not isinstance(index, View):
        if not hasattr(index, 'view') or not hasattr(index, 'buffer'):
            raise CompileError(f'the indices of an indirect DMA must be a tile in SBUF, not {type(index).__name__}')
        index = index.view()
    if not index.tensor.buffer.on_chip:
        raise CompileError('the indices of an indirect DMA must be a tile in SBUF (nl.load them first)')
    if index.tensor.kind.storage.kind not in 'iu':
        raise CompileError(f'the indices of an indirect DMA must be integers, not {index.tensor.kind.public}')
    if index.free_size != 1 and not (columns and len(index.shape) == 2):
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
    if not ndim and index.shape[0] == 1:
        resolved = key[:position] + (0,) + key[position + 1:]
        offset, shape, strides, _, _ = subscript(tensor.inner_shape, tensor.inner_strides, 0, resolved)
        # the axes the subscript keeps (subscript() pads a 1-D access to [n, 1], a column, so count them here)
        kept = len(tensor.inner_shape) - len(resolved) + sum(isinstance(k, slice) for k in resolved)
        if kept >= 2:
            return IndirectView(View(tensor, (), offset, tuple(shape), tuple(strides)), index,
                                tensor.inner_strides[position], tensor.inner_shape[position], scalar=True)
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


def vector_offset_access(tensor: Any, block: Any, start: int, shape: Any, strides: Any, index: Any,
                          indirect_dim: Any) -> View:
    """`t.ap(pattern, offset, vector_offset=idx, indirect_dim=0)`, the Beta 2 vector dynamic access (a DMA gather or
    scatter of rows): element [w, ...] of the access is element `offset + idx[w] * prod(t.shape[1:]) + (the
    pattern's other pairs)` of the base tensor; the step of the pattern's first pair is ignored (NKI access
    patterns guide, "Vector dynamic access": only indirect_dim=0 is supported). The same access as indexing
    the tensor with the index tile (IndirectView)."""
    if tensor.buffer.on_chip:
        raise CompileError('.ap(vector_offset=...) of an on-chip tensor is not supported by the simulator (the '
                           'vector dynamic access is a DMA gather/scatter of HBM rows)')
    if indirect_dim != 0:
        raise CompileError(f'.ap(vector_offset=...): indirect_dim={indirect_dim}; only indirect_dim=0 is supported')
    index = index_tile(index, columns=True)
    columns = index.free_size
    if columns == 1 and index.shape[0] < shape[0]:
        raise CompileError(f'.ap(vector_offset=...): the index tile has {index.shape[0]} partitions, fewer than the '
                           f'pattern\'s first pair counts ({shape[0]})')
    if columns > 1 and (index.shape[0] != INDEX_PARTITIONS or shape[0] > index.shape[0] * columns):
        # nki.isa.dma_transpose, "DMA Indirect Transpose Constraints": "When indices.shape[1] > 1:
        # indices.shape[0] must be exactly 128"; "indices.shape[0] * indices.shape[1] must be >= src.shape[0]"
        raise CompileError(f'.ap(vector_offset=...): an index tile of shape {index.shape} (several columns, the '
                           f'indirect transpose\'s) for a pattern whose first pair counts {shape[0]}: the tile has '
                           f'{INDEX_PARTITIONS} partitions and its indices, column after column, cover the '
                           'pattern\'s rows')
    row_stride = math.prod(int(n) for n in tensor.inner_shape[1:])
    hi = extent(start, shape[1:], strides[1:])[1]
    rows = (tensor.parts * tensor.free - 1 - hi) // row_stride + 1 if row_stride else 0
    if rows < 1:
        raise CompileError('.ap(vector_offset=...): the pattern reaches beyond the tensor for index 0')
    base = View(tensor, block, start, tuple(shape), (0,) + tuple(strides[1:]))
    if columns > 1 or index.shape[0] > shape[0]:
        return GatherTransposeView(base, index, row_stride, min(rows, int(tensor.inner_shape[0])))
    return IndirectView(base, index, row_stride, min(rows, int(tensor.inner_shape[0])))


def scalar_offset_access(tensor: Any, block: Any, start: int, shape: Any, strides: Any, index: Any,
                          indirect_dim: Any) -> View:
    """`t.ap(pattern, offset, scalar_offset=s, indirect_dim=d)`, the Beta 2 scalar dynamic access (a DMA whose start
    is data): the pattern's elements, moved by `s * prod(t.shape[d + 1:])` elements, `s` the value of a (1, 1) SBUF
    integer tile (NKI access-patterns guide, "Scalar dynamic access": the dimension is the base tensor's)."""
    dims = tuple(int(n) for n in tensor.inner_shape)
    try:
        dim = int(indirect_dim) + (len(dims) if int(indirect_dim) < 0 else 0)
    except (TypeError, ValueError):
        raise CompileError(f'.ap(scalar_offset=...): indirect_dim must be an int, not {indirect_dim!r}') from None
    if not 0 <= dim < len(dims):
        raise CompileError(f'.ap(scalar_offset=...): indirect_dim={indirect_dim} of a tensor of shape {dims}')
    if tensor.buffer.on_chip:
        return _on_chip_scalar_offset(tensor, block, start, shape, strides, index, dims, dim)
    index = index_tile(index)
    if index.shape[0] != 1:
        raise CompileError(f'.ap(scalar_offset=...): the offset is a (1, 1) tile, not {index.shape}')
    step = math.prod(dims[dim + 1:])
    lo, hi = extent(start, shape, strides)
    rows = min(dims[dim], (tensor.parts * tensor.free - 1 - hi) // step + 1)
    if lo < 0 or rows < 1:
        raise CompileError('.ap(scalar_offset=...): the pattern reaches beyond the tensor for the offset 0')
    return IndirectView(View(tensor, block, start, tuple(shape), tuple(strides)), index, step, rows, scalar=True)


def _on_chip_scalar_offset(tensor: Any, block: Any, start: int, shape: Any, strides: Any, index: Any, dims: Any,
                           dim: int) -> 'DynamicView':
    """The scalar dynamic access of an SBUF/PSUM tensor (NKI 0.4: nisa.tensor_copy with `.ap(scalar_offset=)` in
    place of the dynamic copies): the pattern moved by `s * prod(t.shape[dim + 1:])` elements within each
    partition, `s` read from a [1, 1] SBUF integer tile when the instruction runs."""
    if dim == 0:
        raise CompileError('.ap(scalar_offset=...) of an on-chip tensor: indirect_dim=0 is its partition dimension; '
                           'a dynamic offset moves an access along a free dimension')
    if not isinstance(index, View) and hasattr(index, 'view') and hasattr(index, 'buffer'):
        index = index.view()
    index = dynamic_index_tile(index, View)
    step = math.prod(dims[dim + 1:])
    free = tensor.free
    lo, hi = extent(start % free, shape[1:], strides[1:])
    rows = min(dims[dim], (free - 1 - hi) // step + 1)
    view = DynamicView(View(tensor, block, start, tuple(shape), tuple(strides)), index, step, rows)
    if lo < 0 or rows < 1 or not dynamic_reach_ok(view, step, rows):
        raise CompileError('.ap(scalar_offset=...): the pattern reaches beyond each partition of the tensor for the '
                           'offset 0')
    view.pattern = True
    return view


DYNAMIC_ACCESS.update(vector=vector_offset_access, scalar=scalar_offset_access)


class DynamicView(IndirectView):
    """An on-chip tile accessed at a dynamic offset along one free dimension (nisa.tensor_copy_dynamic_src's
    source, tensor_copy_dynamic_dst's destination): the static access moved by index[0, 0] * row_stride
    elements within each partition; `rows` offsets (0 .. rows - 1) keep it inside its dimension. Its trace region
    is every element some offset reaches (which one is data, unknown to the dependency tracking and to
    timing-only runs); the index tile is read by the instruction."""
    __slots__ = ('allowed', 'pattern')

    def __init__(self, base: View, index: View, row_stride: int, rows: int) -> None:
        super().__init__(base, index, row_stride, rows, scalar=True)
        self.allowed = False
        self.pattern = False        # an .ap(scalar_offset=...) view (also an operand of tensor_copy and dma_copy)

    def region(self, window: Any, free: int) -> Tuple[int, int, int, int, Any]:
        p0, p1, f0, f1, _ = View.region(self, window, free)
        if p1 > p0:
            f1 += (self.rows - 1) * self.row_stride
        return p0, p1, f0, f1, None

    def start(self) -> int:
        """The dynamic offset, read from the index tile; out of range is an error naming it."""
        value = int(self.index.array().reshape(-1)[0])
        if not 0 <= value < self.rows:
            where = self.tensor.name or f'a tile of shape {list(self.tensor.shape)}'
            raise IndexError(f'dynamic offset {value} is out of range for this access of {where} '
                             f'(valid offsets 0..{self.rows - 1})')
        return value

    def array_over(self, data: np.ndarray, window: Any = None) -> np.ndarray:
        """The window at the dynamic offset (shares memory with data, so results are written through it)."""
        offset, shape = self.clip(window)
        offset += self.start() * self.row_stride
        size = data.itemsize
        return np.ndarray(shape, data.dtype, buffer=data, offset=offset * size,
                          strides=tuple(s * size for s in self.strides))

    def scatter_over(self, data: np.ndarray, values: Any, window: Any = None) -> None:
        self.array_over(data, window)[...] = values

    def combine(self, ufunc: Any, values: Any, window: Any = None) -> None:
        raise CompileError('a dynamically indexed tile is written by nisa.tensor_copy_dynamic_dst only')

    def __repr__(self):
        return f'DynamicView({self.tensor.name or "tile"} shape={self.shape})'


class DynamicRunsView(DynamicView):
    """The older multi-offset form of the dynamic copies (NKI 2.21-era pages: "each index element specifying the
    offset along the free dimension will trigger a tensor_copy instruction"): an index tile of N offsets ([N, 1] or
    [1, N], integers in SBUF) indexes one free dimension of an on-chip tile numpy-style (`t[0, idx_tile, iz]`,
    `t[i_p, idx_row]`, `t[0, idx_tile + iz]`), so that position k along `axis` of the access is the static access
    (offset 0) moved by idx[k] * row_stride elements: one element run per index. Every offset is read from SBUF
    when the copy runs and checked (0 .. rows - 1); the trace has one dynamic copy per index element."""
    __slots__ = ('axis',)

    def __init__(self, base: View, index: View, row_stride: int, rows: int, axis: int) -> None:
        super().__init__(base, index, row_stride, rows)
        self.scalar = False
        self.axis = axis

    @property
    def count(self) -> int:
        return int(self.shape[self.axis])

    def index_window(self, k: int) -> Tuple[Tuple[int, int], ...]:
        """The window of the index tile holding offset k."""
        along = 0 if self.index.shape[0] == self.count else 1
        return tuple((k, k + 1) if a == along else (0, n) for a, n in enumerate(self.index.shape))

    def values(self) -> np.ndarray:
        """The N offsets, read from the index tile; one out of range is an error naming it."""
        values = self.index.array().reshape(-1).astype(np.int64)
        bad = values[(values < 0) | (values >= self.rows)]
        if bad.size:
            where = self.tensor.name or f'a tile of shape {list(self.tensor.shape)}'
            raise IndexError(f'dynamic offset {int(bad[0])} is out of range for this access of {where} '
                             f'(valid offsets 0..{self.rows - 1})')
        return values

    def _offsets(self, window: Any) -> np.ndarray:
        offset, shape = self.clip(window)
        first = window[self.axis][0] if window is not None else 0
        moved = self.values()[first:first + shape[self.axis]]
        flat = np.full(shape, offset, dtype=np.int64)
        for a, (n, s) in enumerate(zip(shape, self.strides)):
            along = [1] * len(shape)
            along[a] = n
            flat = flat + s * np.arange(n, dtype=np.int64).reshape(along)
        along = [1] * len(shape)
        along[self.axis] = shape[self.axis]
        return flat + moved.reshape(along) * self.row_stride

    def array_over(self, data: np.ndarray, window: Any = None) -> np.ndarray:
        """The gathered runs (a copy: a destination is written back with scatter_over)."""
        return data[self._offsets(window)]

    def scatter_over(self, data: np.ndarray, values: Any, window: Any = None) -> None:
        data[self._offsets(window)] = values

    def __repr__(self):
        return f'DynamicRunsView({self.tensor.name or "tile"} shape={self.shape} runs={self.count})'


def dynamic_reach_ok(view: View, row_stride: int, rows: int) -> bool:
    """Does every offset 0 .. rows - 1 keep the on-chip access inside each partition's elements?"""
    free = view.tensor.free
    if row_stride <= 0 or rows < 1 or view.offset < 0 or view.strides[0] < 0:
        return False
    lo, hi = extent(view.offset % free, view.shape[1:], view.strides[1:])
    top = view.offset // free + (view.shape[0] - 1) * (view.strides[0] // free if free else 0)
    return lo >= 0 and hi + (rows - 1) * row_stride < free and top < view.tensor.parts


def dynamic_index_tile(value: Any, tile_type: type, several: bool = False) -> View:
    """The offset operand: a [1, 1] integer tile (or a one-element view of one) in SBUF; with `several`, also a
    tile of offsets [N, 1] or [1, N] (the older multi-offset form)."""
    index: Any = None
    if isinstance(value, View):
        index = value
    elif isinstance(value, tile_type):
        index = cast(Any, value).view()
    if index is None or index.tensor.buffer.name != 'sbuf' or index.tensor.kind.storage.kind not in 'iu':
        raise CompileError('a dynamic offset is one integer held in SBUF: a [1, 1] integer tile (e.g. off[0, 0] '
                           'of an nl.int32 tile in SBUF)')
    count = int(np.prod(index.shape))
    if count != 1 and not (several and len(index.shape) == 2 and 1 in index.shape):
        raise CompileError(f'a dynamic offset is one integer ([1, 1] tile), or a tile of offsets [N, 1] or [1, N] '
                           f'indexing one dimension of a dynamic copy\'s tile; got a tile of shape {index.shape}')
    return index


def dynamic_on_chip(tensor: Any, key: Tuple[Any, ...], tile_type: type) -> DynamicView:
    """`tile[key]` where one free-dimension index is dynamic (a DynamicIndex, or a [1, 1] tile standing for an
    integer index): the static access with that index's static part, moved by the offset at run time."""
    positions = [i for i, k in enumerate(key) if isinstance(k, (DynamicIndex, tile_type, View))]
    if len(positions) != 1 or any(k is Ellipsis for k in key):
        raise CompileError('a dynamically indexed tile has one dynamic index (and no "...")')
    position = positions[0]
    dynamic = key[position]
    if not isinstance(dynamic, DynamicIndex):
        dynamic = DynamicIndex(0, dynamic)
    index = dynamic_index_tile(dynamic.index, tile_type, several=True)
    nblock = tensor.nblock
    if position <= nblock and int(np.prod(index.shape)) > 1:
        raise CompileError('indexing an on-chip tile with a tile of indices is not supported by the simulator along '
                           'its partition dimension (indirect access is a DMA from HBM: nl.load(t[idx_tile, ...]) / '
                           'nl.store; a tile of offsets of a free dimension is the source of '
                           'nisa.tensor_copy_dynamic_src or the destination of nisa.tensor_copy_dynamic_dst)')
    if position <= nblock:
        raise CompileError('a dynamic offset moves an access along a free dimension, not along the partition '
                           'dimension (nor a block dimension)')
    if int(np.prod(index.shape)) > 1:
        return _dynamic_runs(tensor, key, position, dynamic.static, index)
    resolved = key[:position] + (dynamic.static,) + key[position + 1:]
    static = tensor[resolved]
    if type(static) is not View:
        raise CompileError('a dynamically indexed tile needs a plain subscript besides its dynamic index')
    axis = position - nblock
    extent = tensor.inner_shape[axis]
    part = dynamic.static
    if isinstance(part, slice):
        top = (part.stop if part.stop is not None else extent) - 1
    elif isinstance(part, Affine):
        top = part.c + sum(max(0, (n - 1) * k) for _, k, n in part.terms)
    else:
        top = int(part)
    rows = extent - top
    if rows < 1:
        raise CompileError('a dynamically indexed access must fit its dimension at offset 0')
    view = DynamicView(static, index, tensor.inner_strides[axis], rows)
    if not dynamic_reach_ok(view, view.row_stride, rows):
        raise CompileError('a dynamically indexed access must lie within each partition of its tile')
    return view


def _dynamic_runs(tensor: Any, key: Tuple[Any, ...], position: int, static: Any, index: View) -> DynamicRunsView:
    """`tile[key]` with a tile of N offsets at `position` (a free dimension): the index tile takes part in the
    subscript as a numpy index array of its own shape would ([N, 1] spans the second axis from the right, [1, N]
    the last), holding 0 for the static access; each position along that axis moves by its own offset."""
    count = int(np.prod(index.shape))
    if isinstance(static, slice) or not isinstance(static, (Affine, int, np.integer)):
        raise CompileError('a tile of offsets indexes a dimension with nl.arange / nl.mgrid expressions besides it '
                           '(t[0, idx_tile, iz], t[i_p, idx_row], t[0, idx_tile + iz]), not with slices or nl.ds')
    if any(isinstance(k, slice) or k is Ellipsis for k in key):
        raise CompileError('a tile of offsets indexes a tile whose other dimensions take integers or nl.arange / '
                           'nl.mgrid expressions (t[0, idx_tile, iz]), not slices (mixing basic and advanced '
                           'indexing)')
    rax = 1 if index.shape[0] == count else 0
    ndim = max([k.ndim for k in key if isinstance(k, Affine)] + [static.ndim if isinstance(static, Affine) else 0,
                                                                 2])
    element = Affine(0, ((rax, 0, count),), ndim) + static
    resolved = key[:position] + (element,) + key[position + 1:]
    view = tensor[resolved]
    if type(view) is not View:
        raise CompileError('a dynamically indexed tile needs a plain subscript besides its tile of offsets')
    dim = position - tensor.nblock
    axes = [axis for axis, _ in view.index_map[dim][2] if view.shape[axis] == count]
    if len(axes) != 1:
        raise CompileError(f'a tile of {count} offsets: the access has {len(axes)} axes of that size among those '
                           'its dimension spans; which one the offsets run along is ambiguous')
    size, c, _ = view.index_map[dim]
    lo = hi = c
    for _, coef, n in (static.terms if isinstance(static, Affine) else ()):
        lo, hi = lo + min(0, coef * (n - 1)), hi + max(0, coef * (n - 1))
    if lo < 0 or hi >= size:
        raise CompileError('a dynamically indexed access must fit its dimension at offset 0')
    rows = size - hi
    runs = DynamicRunsView(view, index, tensor.inner_strides[dim], rows, axes[0])
    if not dynamic_reach_ok(runs, runs.row_stride, rows):
        raise CompileError('a dynamically indexed access must lie within each partition of its tile')
    return runs
