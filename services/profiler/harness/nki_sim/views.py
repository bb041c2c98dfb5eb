"""Subscripts of tensors, resolved to strided views of one allocation.

`subscript` implements NKI indexing: integers, basic slices / nl.ds, `...`, and affine nl.arange expressions
combined numpy-advanced-indexing style (mixing slices with aranges is illegal). The result is an element
offset plus a shape and strides, so data access is a zero-copy `np.ndarray(buffer=...)` view, never fancy indexing.
Out-of-bounds indices are legal only if a mask later removes them, so bounds are re-checked under the mask window.

Conventions: the first axis of a view is the partition axis; a 0-D or 1-D result is widened to 2-D ([n, 1]).
A window is a tuple of (lo, hi) per view axis (the mask-clipped part of the instruction's iteration space).
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .affine import Affine, Predicate
from .dtypes import from_bytes, kind_of, to_bytes
from .errors import CompileError, StaleStateError
from .tile_ops import EXECUTION, TileOperators


def subscript(dims: Sequence[int], strides: Sequence[int], offset: int, key: Any) -> Tuple[Any, ...]:
    """Resolve `key` against a row-major region.

    Returns (offset, shape, strides, index_map, in_bounds): index_map has one (dim_size, c, ((axis, coef), ...))
    per indexed dimension, i.e. the index range each dimension takes over the view's axes.
    """
    if type(key) is not tuple:
        key = (key,)
    affine_ndim = 0
    has_slice = False
    ellipsis_at = -1
    for i, k in enumerate(key):
        t = type(k)
        if t is Affine:
            if k.ndim > affine_ndim:
                affine_ndim = k.ndim
        elif t is slice:
            has_slice = True
        elif k is Ellipsis:
            ellipsis_at = i
        elif isinstance(k, (Predicate, bool, np.bool_)):
            raise CompileError('indexing a tensor with a mask predicate (`t[c_out < C_out]`, a comparison of '
                               'nl.arange indices) is supported only alone and where the predicate holds for every '
                               'index (then it selects the whole tensor); a predicate false somewhere is not '
                               "supported by the simulator: pass it as the instruction's mask= instead")
        elif not isinstance(k, (int, np.integer)):
            if isinstance(k, RangeIndex):
                return subscript(dims, strides, offset, key[:i] + (k.as_index(),) + key[i + 1:])
            hint = (' (no NKI page documents None, numpy\'s newaxis, as an index; a reduction keeps its axis '
                    'with keepdims=True)' if k is None else '')
            raise CompileError(f'unsupported index {k!r}: use ints, slices, nl.ds or nl.arange expressions{hint}')
    if ellipsis_at >= 0:
        fill = len(dims) - (len(key) - 1)
        key = key[:ellipsis_at] + (slice(None),) * fill + key[ellipsis_at + 1:]
        has_slice = has_slice or fill > 0
    if len(key) > len(dims):
        raise CompileError(f'too many indices ({len(key)}) for a tensor with {len(dims)} dimensions')
    if affine_ndim:
        if has_slice:
            raise CompileError('mixing basic indexing (slices) and advanced indexing (nl.arange) in one subscript: '
                               'the NKI error page err_unsupported_mixing_basic_advanced_tensor_indexing refuses '
                               '`a[i, :]` with i = nl.arange(4)[:, None]; index every axis with nl.arange '
                               'expressions or every axis with slices')
        if len(key) < len(dims):
            raise CompileError('index every dimension when indexing with nl.arange expressions')
        return _advanced(dims, strides, offset, key, affine_ndim)
    return _basic(dims, strides, offset, key)


def _basic(dims, strides, offset, key):
    shape = []
    out_strides = []
    index_map = []
    in_bounds = True
    for d, size in enumerate(dims):
        k = key[d] if d < len(key) else slice(None)
        if isinstance(k, slice):
            negative = k.start is not None and k.start < 0 or k.stop is not None and k.stop < 0
            from_ds = k.step == 1 and k.start is not None and k.stop is not None
            if negative and (from_ds or min(b for b in (k.start, k.stop) if b is not None) < -size):
                # nl.ds(start, n) is start:start + n:1: a negative start there is out of bounds, not counted from
                # the end (a Python slice with both bounds and step 1 reads the same and is refused too)
                raise CompileError(f'slice {k.start}:{k.stop} is out of bounds for a dimension of size {size}')
            if negative:
                # Python slice syntax (the NKI indexing overview: "the standard Python slicing syntax"): a negative
                # bound counts from the end, `t[:, -2:]` is the last two columns
                start, stop, step = k.indices(size)
            elif k.stop is not None and k.stop > size and (k.step or 1) > 0:
                # nl.ds(start, n) past the end: allowed when a mask removes the excess (checked at the use)
                start, stop, step = k.start or 0, k.stop, k.step or 1
                in_bounds = False
            else:
                start, stop, step = k.indices(size)
            count = len(range(start, stop, step))
            offset += start * strides[d]
            index_map.append((size, start, ((len(shape), step),)))
            shape.append(count)
            out_strides.append(step * strides[d])
        else:
            k = int(k)
            if not 0 <= k < size:
                # an integer index (a loop variable) past the end: allowed when a mask turns the instruction off
                # (`mask=row < H` with row that same loop variable), checked at the use like nl.ds past the end
                in_bounds = False
            offset += k * strides[d]
            index_map.append((size, k, ()))
    return (offset, *at_least_2d(shape, out_strides), tuple(index_map), in_bounds)


def at_least_2d(shape: List[int], strides: List[int]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    if len(shape) >= 2:
        return tuple(shape), tuple(strides)
    if len(shape) == 1:
        return (shape[0], 1), (strides[0], 0)
    return (1, 1), (0, 0)


def _advanced(dims, strides, offset, key, ndim):
    shape = [1] * ndim
    out_strides = [0] * ndim
    index_map = []
    in_bounds = True
    last = ndim - 1
    for size, stride, k in zip(dims, strides, key):
        if type(k) is Affine:
            c = k.c
            offset += c * stride
            lo = hi = c
            axes = []
            for rax, coef, n in k.terms:
                axis = last - rax
                have = shape[axis]
                if have == 1:
                    shape[axis] = n
                elif n != 1 and n != have:
                    raise CompileError(f'index shapes do not broadcast: sizes {have} and {n} on one axis')
                out_strides[axis] += coef * stride
                extent = coef * (n - 1)
                if extent > 0:
                    hi += extent
                else:
                    lo += extent
                axes.append((axis, coef))
            index_map.append((size, c, tuple(axes)))
            if lo < 0 or hi >= size:
                in_bounds = False
        else:
            k = int(k)
            offset += k * stride
            if k < 0 or k >= size:
                in_bounds = False       # as in _basic: checked at the use, where a mask may turn it off
            index_map.append((size, k, ()))
    if ndim == 1:
        shape.append(1)
        out_strides.append(0)
    elif ndim > 2:
        order = _grid_axes(index_map, ndim)
        if order is not None:
            shape = [shape[a] for a in order]
            out_strides = [out_strides[a] for a in order]
            moved = {a: i for i, a in enumerate(order)}
            index_map = [(size, c, tuple((moved[a], coef) for a, coef in axes)) for size, c, axes in index_map]
            if len(order) == 1:
                shape.append(1)
                out_strides.append(0)
    return offset, tuple(shape), tuple(out_strides), tuple(index_map), in_bounds


def _grid_axes(index_map, ndim):
    """The axes of an nl.mgrid with more axes than the subscript uses, in subscript order, or None.

    `x[iw, iy]` with `ix, iw, iy = nl.mgrid[0:128, 0:1, 0:n]` is a [1, n] tile (NKI orders a tile's dimensions
    by the indices that span them, and drops grid axes no index uses), not a [1, 1, n] one.
    """
    used = []
    for _, _, axes in index_map:
        for axis, _ in sorted(axes):
            if axis not in used:
                used.append(axis)
    if len(used) == ndim:
        return None
    return used or None


def extent(offset: int, shape: Sequence[int], strides: Sequence[int]) -> Tuple[int, int]:
    """Lowest and highest element an access of `shape` / `strides` from `offset` reaches (0, -1 when empty)."""
    if 0 in shape:
        return 0, -1
    lo = hi = offset
    for n, s in zip(shape, strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi


# The views of `.ap(vector_offset=...)` / `.ap(scalar_offset=...)`, installed by indirect.py (which imports this
# module): indirect.vector_offset_access, indirect.scalar_offset_access.
DYNAMIC_ACCESS: Dict[str, Any] = {}


def access_pattern(tensor: Any, block: Any, base: int, pattern: Any, offset: Any = 0, **kwargs: Any) -> Any:
    """`t.ap(pattern=[[step, count], ...], offset=o)` (NKI Beta 2 access patterns): the view whose axis i takes
    `count` elements `step` apart, starting `o` elements after the start of `t`. Steps and offset count elements
    of the tensor's row-major layout (on chip: partition p starts at p times the partition's size), so the first
    pair of an on-chip pattern steps over partitions. A static pattern reaching outside the tensor is an
    OutOfRangePattern, refused where it is used."""
    vector_offset = kwargs.pop('vector_offset', None)
    scalar_offset = kwargs.pop('scalar_offset', None)
    indirect_dim = kwargs.pop('indirect_dim', 0)
    refused = sorted(k for k, v in kwargs.items() if v is not None and k != 'dtype' or k == 'dtype' and
                     v is not None and v != tensor.kind.public)
    if refused:
        raise CompileError(f'.ap(): {", ".join(refused)} (dynamic or indirect access patterns, reinterpreting '
                           'dtypes) is not supported by the simulator')
    try:
        pairs = [(int(step), int(count)) for step, count in pattern]
        start = base + int(offset)
    except (TypeError, ValueError):
        raise CompileError('.ap(): pattern must be a list of [step, count] pairs of integers') from None
    if not pairs or any(count < 1 for _, count in pairs):
        raise CompileError('.ap(): pattern needs at least one [step, count] pair, every count at least 1')
    shape, strides = at_least_2d([n for _, n in pairs], [s for s, _ in pairs])
    # a vector dynamic access ignores the step of the first pair (its rows are the index values, checked when
    # they are read), so its count may exceed the tensor's rows (row ids that repeat)
    lo, hi = extent(start, shape[1:], strides[1:]) if vector_offset is not None else extent(start, shape, strides)
    total = tensor.parts * tensor.free
    if lo < 0 or hi >= total:
        message = f'.ap(): the pattern reaches elements [{lo}, {hi}] outside the tensor\'s {total}'
        if vector_offset is None and scalar_offset is None:
            return OutOfRangePattern(message)
        raise CompileError(message)
    if tensor.buffer.on_chip and strides[0] % tensor.free:
        raise CompileError(f'.ap(): the first pair of an on-chip pattern steps over partitions, so its step must '
                           f'be a multiple of the partition size ({tensor.free} elements), not {strides[0]}')
    if vector_offset is not None and scalar_offset is not None:
        raise CompileError('.ap(): at most one of scalar_offset and vector_offset can be given')
    if vector_offset is not None:
        return DYNAMIC_ACCESS['vector'](tensor, block, start, shape, strides, vector_offset, indirect_dim)
    if scalar_offset is not None:
        return DYNAMIC_ACCESS['scalar'](tensor, block, start, shape, strides, scalar_offset, indirect_dim)
    if indirect_dim not in (0, None):
        raise CompileError('.ap(): indirect_dim applies to a scalar_offset or vector_offset, neither is given')
    return View(tensor, block, start, shape, strides)


class RangeIndex:
    """An index that stands for the range it covers (loops.AffineRange, an uniterated nl.affine_range of an
    `import nki` kernel): subscript indexes with its as_index() slice."""
    __slots__ = ()

    def as_index(self) -> slice:
        raise NotImplementedError


class OutOfRangePattern:
    """An access pattern reaching outside its tensor. Making one is no error (NKI builds access patterns when the
    kernel is traced, and the NKI Library's output_projection_tkg builds one per packed group before the test that
    skips the groups past the last); an instruction that uses it, or any other use, is a COMPILE_ERROR naming the
    reach."""
    __slots__ = ('message',)

    def __init__(self, message: str) -> None:
        self.message = message

    def __getattr__(self, name: str) -> Any:
        raise CompileError(self.message)

    def __getitem__(self, key: Any) -> Any:
        raise CompileError(self.message)


def destination(view: Any, dma: bool = False) -> Any:
    """`view` as an instruction's destination. A bitcast to another element size (its values decoded from the bits
    of the tensor it views) is written by a DMA only (`dma`: nisa.dma_copy, nl.store, an assignment into HBM, which
    move bytes; View.write_back stores them), and only to a wider element (int32 over two bfloat16: each element
    written spans whole elements of the tensor); an engine instruction or a scatter does not write through it."""
    source = view.tensor.source
    if source is not None and not (dma and type(view) is View and view.tensor.kind.itemsize > source.kind.itemsize):
        raise CompileError(f'writing through .view({view.tensor.kind.public}) of a {source.kind.public} tensor (a '
                           'bitcast to another element size) is not supported by the simulator except by a DMA '
                           '(nisa.dma_copy, nl.store) into elements wider than the tensor\'s; such a view can be read '
                           f'(loaded, stored, computed on); write the {source.kind.public} tensor itself')
    return view


def same_kind(kind: Any, dtype: Any) -> bool:
    other = kind_of(dtype)
    return (other.storage, other.itemsize, other.public) == (kind.storage, kind.itemsize, kind.public)


def index_box(index_map: Any, window: Any) -> Optional[List[Tuple[int, int]]]:
    """Per indexed dimension, the (lo, hi) index range over the window (None if the window is empty)."""
    box = []
    for size, c, axes in index_map:
        lo = hi = c
        for axis, coef in axes:
            a, b = window[axis]
            if b <= a:
                return None
            first, last = coef * a, coef * (b - 1)
            lo += min(first, last)
            hi += max(first, last)
        box.append((lo, hi))
    return box


def composed(outer: Any, inner: Any) -> Any:
    """The index map of a subscript (`inner`, over the axes of a view) of a view whose index map is `outer`: per
    dimension of the outer map, the range it takes over the inner view's axes."""
    result = []
    for size, c, axes in outer:
        terms: dict = {}
        for axis, coef in axes:
            _, inner_c, inner_axes = inner[axis]
            c += coef * inner_c
            for inner_axis, inner_coef in inner_axes:
                terms[inner_axis] = terms.get(inner_axis, 0) + coef * inner_coef
        result.append((size, c, tuple((axis, coef) for axis, coef in terms.items() if coef)))
    return tuple(result)


def check_bounds(index_map: Any, window: Any) -> None:
    """Raise unless every index stays in range over the (mask-clipped) window."""
    box = index_box(index_map, window)
    if box is None:
        return
    for (size, _, _), (lo, hi) in zip(index_map, box):
        if lo < 0 or hi >= size:
            raise CompileError(f'index range [{lo}, {hi}] is out of bounds for a dimension of size {size}')


def _within(index_map: Any, shape: Sequence[int]) -> bool:
    box = index_box(index_map, full_window(shape))
    return box is None or all(0 <= lo and hi < size for (size, _, _), (lo, hi) in zip(index_map, box))


def full_window(shape: Sequence[int]) -> Tuple[Tuple[int, int], ...]:
    return tuple((0, s) for s in shape)


def operand_window(window: Any, out_shape: Tuple[int, ...], shape: Tuple[int, ...]) -> Any:
    """The part of an operand an instruction touches: the window on axes it shares with the output, all of a
    broadcast (size-1 or missing) axis."""
    if window is None:
        return None
    return tuple(window[a] if a < len(out_shape) and shape[a] == out_shape[a] else (0, shape[a])
                 for a in range(len(shape)))


class View(TileOperators):
    """A strided region of one tensor (one block of it, for blocked on-chip tensors).

    `index_map` (from subscript, None for views built otherwise) relates view axes to the indexed dimensions;
    `in_bounds` False defers the bounds check to the (masked) use; `tensor_indexed` says the map's dimensions
    are the tensor's own (not those of an enclosing view), so it describes an index box in the tensor.
    """
    __slots__ = ('tensor', 'block', 'offset', 'shape', 'strides', 'index_map', 'in_bounds', 'tensor_indexed',
                 'one_dim', 'memo')

    def __init__(self, tensor, block, offset, shape, strides, index_map=None, in_bounds=True, tensor_indexed=False,
                 one_dim=False):
        self.tensor = tensor
        self.block = block
        self.offset = offset
        self.shape = shape
        self.strides = strides
        self.index_map = index_map
        self.in_bounds = in_bounds
        self.tensor_indexed = tensor_indexed
        # a one-dimensional view (a 1-D HBM tensor, `flatten_dims` down to one dimension): stored [n, 1] like every
        # view, but the view primitives below number its dimensions as the kernel sees them (one)
        self.one_dim = one_dim
        self.memo = None    # the trace's measure of this view under its last window (runtime._operand)

    # ----- geometry -----
    def clip(self, window: Any) -> Tuple[int, Tuple[int, ...]]:
        """(offset, shape) of the window of this view, after re-checking deferred bounds."""
        if not self.in_bounds:
            check_bounds(self.index_map, window or full_window(self.shape))
        if window is None:
            return self.offset, self.shape
        offset = self.offset
        for (lo, _), stride in zip(window, self.strides):
            offset += lo * stride
        return offset, tuple(hi - lo for lo, hi in window)

    def region(self, window: Any, free: int) -> Tuple[int, int, int, int, Any]:
        """Where the window lies in its allocation: (p0, p1, f0, f1, box).

        On chip: bounding partition rows [p0, p1) and per-partition element range [f0, f1), box None.
        HBM: the flat element range [f0, f1) and, when known, the index box per tensor dimension.
        """
        offset, shape = self.clip(window)
        if 0 in shape:
            return 0, 0, 0, 0, None
        if not self.tensor.buffer.on_chip:
            lo = hi = offset
            for n, s in zip(shape, self.strides):
                ext = (n - 1) * s
                if ext > 0:
                    hi += ext
                else:
                    lo += ext
            box = None
            canonical = self.tensor.hbm_alloc.canonical
            if self.tensor_indexed and (canonical is self.tensor or canonical.shape == self.tensor.shape):
                box = index_box(self.index_map, window or full_window(self.shape))
            return 0, 1, lo, hi + 1, box
        p_stride = self.strides[0]
        p0, f_base = divmod(offset, free)
        f_lo = f_hi = f_base
        for n, s in zip(shape[1:], self.strides[1:]):
            ext = (n - 1) * s
            if ext > 0:
                f_hi += ext
            else:
                f_lo += ext
        if p_stride % free or f_lo < 0 or f_hi >= free:
            return 0, self.tensor.parts, 0, free, None
        p1 = p0 + (shape[0] - 1) * (p_stride // free) + 1 if shape[0] else p0
        return p0, p1, f_lo, f_hi + 1, None

    def contiguous_run(self, window: Any) -> int:
        """Elements in the innermost contiguous run of the window (for DMA descriptor sizes)."""
        _, shape = self.clip(window)
        run = 1
        expected = 1
        on_chip = self.tensor.buffer.on_chip
        for axis in range(len(shape) - 1, -1, -1):
            n = shape[axis]
            if n == 1:
                continue
            if self.strides[axis] != expected or (on_chip and axis == 0):
                break
            run *= n
            expected *= n
        return run

    def array(self, window: Any = None) -> np.ndarray:
        """The numpy view of the window (shares memory with the allocation; read-only decoded values for a bitcast
        to another element size)."""
        source = self.tensor.source
        if source is None:
            return self.array_over(self.storage(), window)
        # a bitcast to another element size: decode only the span of the allocation the window covers
        offset, shape = self.clip(window)
        lo, hi = extent(offset, shape, self.strides)
        alloc = self.tensor.alloc_for(self.block)
        if alloc.data is None:
            raise _stale(alloc)
        new, old = self.tensor.kind.itemsize, source.kind.itemsize      # powers of two: the span stays aligned
        first, last = lo * new // old, -(-(hi + 1) * new // old)
        if 0 in shape:
            first = last = 0
        data = from_bytes(to_bytes(alloc.data[first:last], source.kind), self.tensor.kind)
        data.flags.writeable = False
        size = data.itemsize
        return np.ndarray(shape, data.dtype, buffer=data, offset=(offset - first * old // new) * size,
                          strides=tuple(s * size for s in self.strides))

    def writable(self, window: Any = None) -> np.ndarray:
        """The window's elements for a DMA to write into: array(), or, through a bitcast to another element size, a
        decoded copy whose new values write_back stores."""
        out = self.array(window)
        return out.copy() if self.tensor.source is not None else out

    def in_allocation(self, window: Any, where: Any = None) -> Tuple['View', Any, Any]:
        """(view, window, where) of the same bytes in the elements of the tensor a bitcast to a wider element views:
        each element spans `ratio` consecutive ones, a last axis of the view (for write bookkeeping kept per
        allocation element: coverage of outputs, races between programs). Other views are returned as they are."""
        source = self.tensor.source
        if source is None:
            return self, window, where
        ratio = self.tensor.kind.itemsize // source.kind.itemsize
        view = View(source, self.block, self.offset * ratio,
                    self.shape + (ratio,), tuple(s * ratio for s in self.strides) + (1,), None, True)
        if window is not None:
            window = tuple(window) + ((0, ratio),)
        if where is not None:
            where = np.repeat(np.asarray(where)[..., None], ratio, axis=-1)
        return view, window, where

    def write_back(self, window: Any, values: np.ndarray, where: Any = None) -> None:
        """After a DMA wrote `values` (the window's elements, from writable()) through a bitcast to a wider element
        (the only one destination() lets a DMA write): their bit patterns replace the bytes of the viewed tensor's
        elements they span (NkiTensor.view: the same bytes in fewer elements); elements off the window, or where
        `where` does not hold, keep their bits. Nothing to do for other views, written in place."""
        if self.tensor.source is None:
            return
        view, window, where = self.in_allocation(window, where)
        source = view.tensor.kind
        encoded = from_bytes(to_bytes(np.ascontiguousarray(values).reshape(-1), self.tensor.kind), source)
        out = view.array(window)
        encoded = encoded.reshape(out.shape)
        if where is None:
            out[...] = encoded
        else:
            np.copyto(out, encoded, where=where)

    def storage(self) -> np.ndarray:
        """The allocation's flat data as this view's tensor reads it: its own storage, the same bits as another
        dtype of the same size (t.view(dtype)), or, for a bitcast to another element size, the allocation's bit
        patterns decoded in this tensor's format (a read-only copy: such views are never written, see
        `destination`)."""
        alloc = self.tensor.alloc_for(self.block)
        data = alloc.data
        if data is None:
            raise _stale(alloc)
        source = self.tensor.source
        if source is not None:
            data = from_bytes(to_bytes(data, source.kind), self.tensor.kind)
            data.flags.writeable = False
            return data
        storage = self.tensor.kind.storage
        if data.dtype != storage:           # a bitcast (t.view(dtype)) of the allocation
            data = data.view(storage)
        return data

    def outside(self, where: np.ndarray) -> Any:
        """Under an elementwise mask, the elements whose index is out of bounds (None when none can be): legal
        only where the mask removes them (e.g. the padding of a pooling window)."""
        if self.index_map is None or _within(self.index_map, self.shape):
            return None
        grid = np.indices(self.shape, sparse=True)
        bad = np.zeros(self.shape, dtype=bool)
        for size, c, axes in self.index_map:
            index = c + sum((coef * grid[axis] for axis, coef in axes), np.zeros(1, dtype=np.int64))
            bad = bad | (index < 0) | (index >= size)
        if (bad & where).any():
            raise CompileError('an index is out of bounds where the mask keeps the element')
        return bad if bad.any() else None

    def masked_array(self, where: np.ndarray, fill: Any) -> np.ndarray:
        """The view's elements (a copy) under an elementwise mask; masked-out elements read as `fill`."""
        bad = self.outside(where)
        if bad is None:
            return np.where(where, self.array(), fill)
        grid = np.indices(self.shape, sparse=True)
        offsets = self.offset + sum((g * s for g, s in zip(grid, self.strides)), np.zeros(1, dtype=np.int64))
        data = self.storage()
        keep = where & ~bad
        return np.where(keep, data[np.where(keep, offsets, 0)], fill)

    def checked_under(self, where: np.ndarray) -> 'View':
        """This view with its bounds verified under an elementwise mask (so instructions do not re-check them)."""
        if self.in_bounds:
            return self
        self.outside(where)
        return View(self.tensor, self.block, self.offset, self.shape, self.strides, self.index_map, True,
                    self.tensor_indexed)

    def array_over(self, data: np.ndarray, window: Any = None) -> np.ndarray:
        """The window of this view laid over `data`, a flat array of the allocation's size."""
        offset, shape = self.clip(window)
        if 0 in shape:      # an empty window (a mask that keeps nothing) may start past the allocation
            return np.empty(shape, data.dtype)
        size = data.itemsize
        return np.ndarray(shape, data.dtype, buffer=data, offset=offset * size,
                          strides=tuple(s * size for s in self.strides))

    @property
    def alloc(self) -> Any:
        return self.tensor.alloc_for(self.block)

    @property
    def free_size(self) -> int:
        n = 1
        for s in self.shape[1:]:
            n *= s
        return n

    # ----- tile-like surface shared with Tensor -----
    @property
    def dtype(self) -> Any:
        return self.tensor.kind.public

    @property
    def buffer(self) -> Any:
        return self.tensor.buffer

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __getitem__(self, key):
        if key is True or type(key) is Predicate and key.holds_everywhere():
            return self     # `t[c_out < C_out]` with the condition true at every index: the whole view
        if not self.in_bounds:
            check_bounds(self.index_map, full_window(self.shape))
        offset, shape, strides, index_map, in_bounds = subscript(self.shape, self.strides, self.offset, key)
        if self.tensor_indexed and in_bounds and self.index_map is not None:
            # a subscript of a subscript (`o_hbm = out[b, h]; o_hbm[rows, cols]`): its index box in the tensor,
            # so that writes of different affine_range iterations to disjoint boxes are not taken for a conflict
            return View(self.tensor, self.block, offset, shape, strides, composed(self.index_map, index_map), True,
                        True)
        return View(self.tensor, self.block, offset, shape, strides, index_map, in_bounds)

    def __setitem__(self, key, value):
        EXECUTION.assign(self[key], value)

    def view(self, dtype: Any) -> 'View':
        """`t.view(dtype)`: the same elements' bits read as `dtype`; for another element size the innermost
        dimension holds the same bytes in more (or fewer) elements, and it must be contiguous."""
        if same_kind(self.tensor.kind, dtype):
            return self
        other = EXECUTION.bitcast(self.tensor, dtype)
        if other.source is None:
            return View(other, self.block, self.offset, self.shape, self.strides, self.index_map, self.in_bounds,
                        self.tensor_indexed)
        old, new = self.tensor.kind.itemsize, other.kind.itemsize
        shape, strides = list(self.shape), list(self.strides)
        if not self.in_bounds or strides[-1] != 1 and shape[-1] != 1 or (shape[-1] * old) % new \
                or any((s * old) % new for s in strides[:-1]) or (self.offset * old) % new:
            raise CompileError(f'.view({other.kind.public}) of this {self.tensor.kind.public} view: a bitcast to '
                               'another element size needs a contiguous innermost dimension whose bytes fill whole '
                               f'{other.kind.public} elements')
        shape[-1] = shape[-1] * old // new
        return View(other, self.block, self.offset * old // new, tuple(shape),
                    tuple(s * old // new for s in strides[:-1]) + (1,), None, True, False)

    def ap(self, pattern: Any, offset: Any = 0, **kwargs: Any) -> Any:
        dtype = kwargs.pop('dtype', None)
        if dtype is not None and not same_kind(self.tensor.kind, dtype):
            # NKI Access Patterns page: "The dtype parameter can be used for reinterpret casting the tensor. Since
            # both the pattern and the offset are in terms of number of elements, not bytes, the count must be
            # computed accordingly": the pattern over the bits read as dtype (as .view(dtype))
            dynamic = [name for name in ('scalar_offset', 'vector_offset') if kwargs.get(name) is not None]
            if dynamic:
                # (a bitcast view reads at its static offset: the dynamic one would be dropped)
                raise CompileError(f'.ap(dtype=..., {dynamic[0]}=...): a reinterpret cast of an access pattern with a '
                                   'dynamic offset is not modelled by the simulator; bitcast a static access '
                                   '(.ap(dtype=) without the offset, or .view(dtype)) into SBUF first')
            return self.view(dtype).ap(pattern, offset, **kwargs)
        return access_pattern(self.tensor, self.block, self.offset, pattern, offset, **kwargs)

    def get_pattern(self) -> List[List[int]]:
        """NKI's `t.get_pattern()`: this view's access pattern as `.ap()` takes it, one [step, count] pair per
        dimension (steps in elements; on chip the first pair steps over partitions, a partition's size apart)."""
        shape, strides = self._dims()
        return [[int(step), int(count)] for step, count in zip(strides, shape)]

    # ----- NKI 0.6 view primitives (geometry only: no instruction, no copy) -----
    def _reshaped(self, shape: List[int], strides: List[int], offset: int = 0) -> 'View':
        if not self.in_bounds:
            check_bounds(self.index_map, full_window(self.shape))
        wide_shape, wide_strides = at_least_2d(shape, strides)
        return View(self.tensor, self.block, self.offset + offset, wide_shape, wide_strides,
                    one_dim=len(shape) == 1)

    def _dims(self) -> Tuple[List[int], List[int]]:
        """The shape and strides as the kernel numbers the dimensions (one for a one-dimensional view)."""
        if self.one_dim:
            return [self.shape[0]], [self.strides[0]]
        return list(self.shape), list(self.strides)

    def _axis(self, dim: Any, name: str, free_only: bool = True) -> int:
        shape = self._dims()[0]
        axis = int(dim) + (len(shape) if int(dim) < 0 else 0)
        if not 0 <= axis < len(shape):
            raise CompileError(f'.{name}: dimension {dim} of a tensor of shape {tuple(shape)}')
        if free_only and axis == 0 and self.tensor.buffer.on_chip:
            raise CompileError(f'.{name}: the partition dimension of an on-chip tensor cannot be changed by a view')
        return axis

    def permute(self, dims: Any) -> 'View':
        order = [int(d) for d in dims]
        shape, strides = self._dims()
        if sorted(order) != list(range(len(shape))) or self.tensor.buffer.on_chip and order[0] != 0:
            raise CompileError(f'.permute({order}): a permutation of the dimensions of {tuple(shape)} that keeps '
                               'an on-chip partition dimension first')
        return self._reshaped([shape[d] for d in order], [strides[d] for d in order])

    def slice(self, dim: Any, start: Any, end: Any = None, step: Any = 1) -> 'View':
        axis = self._axis(dim, 'slice', free_only=False)
        shape, strides = self._dims()
        begin, stop, stride = slice(start, end, step).indices(shape[axis])
        first = begin * strides[axis]
        shape[axis] = len(range(begin, stop, stride))
        strides[axis] *= stride
        return self._reshaped(shape, strides, first)

    def select(self, dim: Any, index: Any) -> 'View':
        axis = self._axis(dim, 'select')
        shape, strides = self._dims()
        if isinstance(index, (View, TileOperators)):
            return self._dynamic_select(axis, index)
        position = int(index)
        if not 0 <= position < shape[axis]:
            raise CompileError(f'.select: index {position} is out of bounds for a dimension of size '
                               f'{shape[axis]}')
        first = position * strides[axis]
        del shape[axis], strides[axis]
        return self._reshaped(shape, strides, first)

    def _dynamic_select(self, axis: int, index: Any) -> 'View':
        """`t.select(dim, idx)` with `idx` an NkiTensor ("a scalar loaded into SBUF"): the NkiTensor page's dynamic
        selection, "the index is resolved at runtime"; the same access as `.ap(pattern of the other dimensions,
        scalar_offset=idx, indirect_dim=dim)` (indirect.scalar_offset_access), modelled for a whole tensor."""
        shape, strides = self._dims()
        dims = [int(n) for n in self.tensor.inner_shape]
        natural, step = [], 1
        for n in reversed(dims):
            natural.append(step)
            step *= n
        if self.one_dim or self.offset or list(shape) != dims or list(strides) != natural[::-1]:
            raise CompileError('.select(dim, <tensor>) (a dynamic selection) of a view of part of a tensor is not '
                               'modelled by the simulator; select on the whole tensor, or use .ap(scalar_offset=)')
        pattern = [[int(s), int(n)] for a, (s, n) in enumerate(zip(strides, shape)) if a != axis]
        return access_pattern(self.tensor, self.block, 0, pattern, 0, scalar_offset=index, indirect_dim=axis)

    def expand_dim(self, dim: Any) -> 'View':
        shape, strides = self._dims()
        axis = int(dim) + (len(shape) + 1 if int(dim) < 0 else 0)
        lowest = 1 if self.tensor.buffer.on_chip else 0
        if not lowest <= axis <= len(shape):
            raise CompileError(f'.expand_dim: position {dim} for a tensor of shape {tuple(shape)}')
        return self._reshaped(shape[:axis] + [1] + shape[axis:], strides[:axis] + [0] + strides[axis:])

    def squeeze_dim(self, dim: Any) -> 'View':
        axis = self._axis(dim, 'squeeze_dim')
        shape, strides = self._dims()
        if shape[axis] != 1:
            raise CompileError(f'.squeeze_dim: dimension {dim} has size {shape[axis]}, not 1')
        del shape[axis], strides[axis]
        return self._reshaped(shape, strides)

    def broadcast(self, dim: Any, size: Any) -> 'View':
        axis = self._axis(dim, 'broadcast')
        shape, strides = self._dims()
        if shape[axis] != 1:
            raise CompileError(f'.broadcast: dimension {dim} has size {shape[axis]}, not 1')
        shape[axis], strides[axis] = int(size), 0
        return self._reshaped(shape, strides)

    def flatten_dims(self, start_dim: Any, end_dim: Any) -> 'View':
        """Dimensions start_dim..end_dim (inclusive) merged into one; the parameter names are those the NKI
        Library passes by keyword (`x.flatten_dims(start_dim=0, end_dim=1)`, core/subkernels/rmsnorm_tkg)."""
        first, last = self._axis(start_dim, 'flatten_dims'), self._axis(end_dim, 'flatten_dims')
        shape, strides = self._dims()
        for axis in range(first, last):
            if strides[axis] != strides[axis + 1] * shape[axis + 1]:
                raise CompileError(f'.flatten_dims({start_dim}, {end_dim}): the dimensions are not contiguous')
        merged = 1
        for n in shape[first:last + 1]:
            merged *= n
        return self._reshaped(shape[:first] + [merged] + shape[last + 1:],
                              strides[:first] + [strides[last]] + strides[last + 1:])

    def reshape_dim(self, dim: Any, shape: Any) -> 'View':
        """Dimension dim split into `shape`; one size may be -1 (inferred); an on-chip partition dimension only
        in the trivial form (its own size), as the NkiTensor.reshape_dim documentation allows."""
        axis = self._axis(dim, 'reshape_dim', free_only=len(shape) != 1)
        dims, dim_strides = self._dims()
        sizes = inferred_sizes(shape, dims[axis], '.reshape_dim', f'the {dims[axis]} elements of dimension {dim}')
        total = 1
        for n in sizes:
            total *= n
        if total != dims[axis]:
            raise CompileError(f'.reshape_dim: {sizes} does not hold the {dims[axis]} elements of dimension '
                               f'{dim}')
        strides = []
        step = dim_strides[axis]
        for n in reversed(sizes):
            strides.append(step)
            step *= n
        return self._reshaped(dims[:axis] + sizes + dims[axis + 1:],
                              dim_strides[:axis] + strides[::-1] + dim_strides[axis + 1:])

    # ----- NkiTensor queries and views of the NKI 2.32+ API reference (nki.language.NkiTensor) -----
    def is_contiguous(self) -> bool:
        """`t.is_contiguous()`: "each non-size-1 dimension's stride must equal the product of the shape sizes of
        inner dimensions"; on chip the partition dimension is skipped ("partitions are physically independent
        memory banks")."""
        shape, strides = self._dims()
        first = 1 if self.tensor.buffer.on_chip else 0
        inner = 1
        for axis in range(len(shape) - 1, first - 1, -1):
            if shape[axis] != 1 and strides[axis] != inner:
                return False
            inner *= shape[axis]
        return True

    def is_indirect(self) -> bool:
        """`t.is_indirect()`: whether the view addresses through runtime offsets (IndirectView answers True)."""
        return False

    def rearrange(self, src_pattern: Any, dst_pattern: Any, fixed_sizes: Any = None) -> 'View':
        """`t.rearrange(src_pattern, dst_pattern, fixed_sizes=None)`: einops-style named dimensions; a tuple in
        `src_pattern` splits that dimension (its sizes from `fixed_sizes`, one of them inferred), a tuple in
        `dst_pattern` merges its members. The page's example: `t.rearrange(('b', ('h', 'w')), ('b', 'w', 'h'),
        {'h': 4})` of a (128, 24) tensor is (128, 6, 4). Built from reshape_dim, permute and flatten_dims, so their
        constraints hold (an on-chip partition dimension stays first and whole; merged dimensions are
        contiguous)."""
        sizes = dict(fixed_sizes or {})
        source, target = list(src_pattern), list(dst_pattern)
        dims = self._dims()[0]
        if len(source) != len(dims):
            raise CompileError(f'.rearrange: the source pattern {tuple(source)} names {len(source)} dimensions, the '
                               f'tensor has {len(dims)} ({tuple(dims)})')

        def names(pattern: List[Any], side: str) -> List[str]:
            found: List[str] = []
            for entry in pattern:
                group = list(entry) if isinstance(entry, (tuple, list)) else [entry]
                if not group or not all(isinstance(n, str) for n in group):
                    raise CompileError(f'.rearrange: the {side} pattern holds names (str) or tuples of names, '
                                       f'not {entry!r}')
                found += group
            if len(set(found)) != len(found):
                raise CompileError(f'.rearrange: a name appears twice in the {side} pattern {tuple(pattern)}')
            return found

        flat = names(source, 'source')
        if sorted(flat) != sorted(names(target, 'destination')):
            raise CompileError(f'.rearrange: the patterns {tuple(source)} and {tuple(target)} name different '
                               'dimensions')
        unknown = sorted(set(sizes) - set(flat))
        if unknown:
            raise CompileError(f'.rearrange: fixed_sizes names {unknown}, which the patterns do not')
        view = self
        for axis in range(len(source) - 1, -1, -1):      # split from the last dimension, so axes keep their place
            entry = source[axis]
            if isinstance(entry, (tuple, list)):
                view = view.reshape_dim(axis, [int(sizes.get(n, -1)) for n in entry])
        view = view.permute([flat.index(n) for n in names(target, 'destination')])
        position, spans = 0, []
        for entry in target:
            width = len(entry) if isinstance(entry, (tuple, list)) else 1
            spans.append((position, position + width - 1))
            position += width
        for first, last in reversed(spans):
            if last > first:
                view = view.flatten_dims(first, last)
        return view

    def vector_select(self, dim: Any, vector_offset: Any) -> 'View':
        """`t.vector_select(0, offsets)`: partition p of the result reads dimension 0 at `offsets[p]` ("Only
        supported on HBM tensors"; "dim must be 0"), the dimension's stride scaling the index; the result has
        `offsets.shape[0]` rows. The same DMA gather or scatter as `.ap(pattern, vector_offset=offsets,
        indirect_dim=0)` (indirect.vector_offset_access)."""
        shape, strides = self._dims()
        if int(dim) != 0:
            raise CompileError(f'.vector_select: dim={dim}; the NkiTensor page allows dim 0 only')
        if self.tensor.buffer.on_chip:
            raise CompileError('.vector_select of an on-chip tensor: the NkiTensor page supports it on HBM '
                               'tensors only')
        if not hasattr(vector_offset, 'shape') or len(vector_offset.shape) != 2 or vector_offset.shape[1] != 1:
            raise CompileError('.vector_select: vector_offset is an SBUF tile of per-partition indices, shape '
                               f'(partitions, 1), not {getattr(vector_offset, "shape", vector_offset)!r}')
        row_stride = 1
        for n in self.tensor.inner_shape[1:]:
            row_stride *= int(n)
        if self.one_dim or strides[0] != row_stride:
            raise CompileError('.vector_select of a view whose dimension 0 is not the tensor\'s rows (a step of '
                               f'{strides[0]} elements, rows are {row_stride} apart) is not modelled by the '
                               'simulator')
        pattern = [[row_stride, int(vector_offset.shape[0])]] + [[int(s), int(n)] for s, n in
                                                                  zip(strides[1:], shape[1:])]
        return access_pattern(self.tensor, self.block, self.offset, pattern, 0, vector_offset=vector_offset,
                              indirect_dim=0)

    def __iadd__(self, value):
        EXECUTION.accumulate(self, value)
        return self

    def same_region(self, other: Any) -> bool:
        return (isinstance(other, View) and other.tensor is self.tensor and other.block == self.block
                and other.offset == self.offset and other.shape == self.shape and other.strides == self.strides)

    def broadcast_to(self, shape: Sequence[int]) -> Any:
        return EXECUTION.broadcast_to(self, shape)

    def reshape(self, shape: Sequence[int]) -> Any:
        return EXECUTION.reshape(self, shape)

    def indirect(self, index: Any, num_elem: Any = None) -> Any:
        return EXECUTION.indirect(self, index, num_elem)

    def __repr__(self):
        return f'View({self.tensor.name or "tile"}{list(self.block)} shape={self.shape})'


def inferred_sizes(shape: Sequence[Any], count: int, call: str, what: str) -> List[int]:
    """`shape` as ints, with its one -1 (if any) the size that makes the sizes hold `count` elements, as numpy's
    reshape and NkiTensor.reshape_dim infer it; a CompileError naming `call` and `what` when no size does."""
    sizes = [int(n) for n in shape]
    if sizes.count(-1) > 1 or any(n < -1 for n in sizes):
        raise CompileError(f'{call}: {sizes} may infer (-1) one size only, and no size is negative')
    if -1 in sizes:
        known = 1
        for n in sizes:
            known *= n if n != -1 else 1
        if known == 0 or count % known:
            raise CompileError(f'{call}: {sizes} cannot split {what}')
        sizes[sizes.index(-1)] = count // known
    return sizes


def _stale(alloc):
    return StaleStateError(
        f'allocation {alloc.id} was read after its last use in an earlier identical run: '
        'the kernel issued a different instruction stream this time (stateful or non-deterministic kernel)')
