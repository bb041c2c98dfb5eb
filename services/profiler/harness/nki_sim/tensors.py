"""Tensors: HBM tensors, declared on-chip tensors (blocks + partition + free dims), and instruction-result tiles.

On-chip shapes follow NKI: dims left of `nl.par_dim(P)` are block dims, each block an independent allocation
created lazily on first touch (declared tensors in generated kernels are virtual and can be gigabytes);
without par_dim the first dim is the partition dim. A tile returned by an instruction is an on-chip tensor with
no block dims; until it is assigned somewhere it is `pending` (see runtime), after being assigned into a
destination it becomes an alias of that destination view.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import memory
from .affine import Affine, DynamicIndex, Predicate
from .dtypes import AlternateFill, Kind, check_on_chip, kind_of, uninitialized_float, uninitialized_integers
from .errors import CompileError
from .indirect import dynamic_on_chip, indirect_access
from .tile_ops import EXECUTION, TileOperators
from .views import View, access_pattern, at_least_2d, inferred_sizes, same_kind, subscript

PARTITION_LIMIT = 128
PSUM_PARTITION_BYTES = 2048
PSUM_BANKS = 8          # a PSUM tensor (a block of one, in Beta 1) may span the 8 banks of a partition


class par_dim:
    """nl.par_dim(n): marks the partition dimension inside an on-chip shape."""
    __slots__ = ('size',)

    def __init__(self, size):
        self.size = int(size)

    def __index__(self):
        return self.size

    def __int__(self):
        return self.size

    def __repr__(self):
        return f'par_dim({self.size})'


_TILE_STRIDES: Dict[Tuple[int, ...], Tuple[int, ...]] = {}   # Tensor.tile: row-major strides by shape


def row_major_strides(dims):
    strides = []
    acc = 1
    for d in reversed(dims):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


class Tensor(TileOperators):
    __slots__ = ('buffer', 'kind', 'shape', 'nblock', 'inner_shape', 'inner_strides', 'parts', 'free', 'blocks',
                 'hbm_alloc', 'site', 'name', 'init', 'pending', 'alias', 'numerics', 'whole', 'block_group',
                 'produced', 'source')

    def __class_getitem__(cls, item: Any) -> Any:
        """`nt.tensor[128, 512]` in annotations: the tensor type itself."""
        return cls

    @classmethod
    def tile(cls, buffer: memory.Buffer, kind: Kind, shape: Tuple[int, ...], site: int, numerics: bool) -> 'Tensor':
        """An instruction-result tile: no block dims, shape (P, *free) already validated by the instruction."""
        if not kind.engine_format and buffer.on_chip:
            check_on_chip(kind)
        tile = cls.__new__(cls)
        tile.buffer = buffer
        tile.kind = kind
        tile.produced = True            # an instruction's result, not a declared tensor
        tile.source = None
        tile.site = site
        tile.name = ''
        tile.numerics = numerics
        tile.init = 0
        tile.block_group = None
        tile.pending = None
        tile.alias = None
        tile.hbm_alloc = None
        tile.whole = None
        tile.shape = tile.inner_shape = shape
        tile.nblock = 0
        strides = _TILE_STRIDES.get(shape) if type(shape) is tuple else None
        if strides is None:
            strides = row_major_strides(shape)
            if type(shape) is tuple:
                _TILE_STRIDES[shape] = strides
        tile.inner_strides = strides
        tile.parts = shape[0]
        free = 1
        for d in shape[1:]:
            free *= d
        tile.free = free
        tile.blocks = {}
        return tile

    def __init__(self, buffer, kind, shape, site, name='', numerics=True):
        self.buffer = buffer
        self.produced = False
        # a bitcast to another element size (t.view(dtype), compute.bitcast): the tensor whose allocations this one
        # reads as `kind` (the root: its kind is the allocations' storage); None for every other tensor
        self.source: Optional['Tensor'] = None
        self.kind = kind
        self.site = site
        self.name = name
        self.numerics = numerics
        self.init = 0
        self.pending = None
        self.alias = None
        self.blocks = None
        self.hbm_alloc = None
        self.whole = None
        self.block_group: Optional[List[Optional[int]]] = None
        nblock = 0
        if buffer.on_chip:
            for i, d in enumerate(shape):
                if isinstance(d, par_dim):
                    nblock = i
                    break
        self.shape = tuple(int(d) for d in shape)
        self.nblock = nblock
        self.inner_shape = self.shape[nblock:]
        self.inner_strides = row_major_strides(self.inner_shape)
        if buffer.on_chip:
            check_on_chip(kind)
            if not self.inner_shape:
                raise CompileError('an on-chip tensor needs a partition dimension')
            self.parts = self.inner_shape[0]
            self.free = int(np.prod(self.inner_shape[1:], dtype=np.int64)) if len(self.inner_shape) > 1 else 1
            if self.parts > PARTITION_LIMIT:
                raise CompileError(f'partition dimension {self.parts} exceeds {PARTITION_LIMIT}')
            if buffer is memory.psum and self.free * kind.itemsize > PSUM_PARTITION_BYTES * PSUM_BANKS:
                raise CompileError(f'PSUM tensor needs {self.free * kind.itemsize} bytes per partition; the '
                                   f'{PSUM_BANKS} PSUM banks of a partition hold {PSUM_PARTITION_BYTES * PSUM_BANKS}')
            self.blocks = {}
        else:
            self.parts = 1
            self.free = int(np.prod(self.shape, dtype=np.int64))

    # ----- storage -----
    def alloc_for(self, block: Tuple[int, ...]) -> memory.Alloc:
        if self.hbm_alloc is not None:
            return self.hbm_alloc
        if self.source is not None:
            return self.source.alloc_for(block)
        alloc = self.blocks.get(block)
        if alloc is None:
            data = None
            if self.numerics:
                n = self.parts * self.free
                storage = self.kind.storage
                data = uninitialized(n, storage) if self.init is UNINITIALIZED else \
                    np.zeros(n, storage) if self.init == 0 else np.full(n, self.init, storage)
            alloc = self.blocks[block] = memory.Alloc(self.buffer, self.parts, self.free, self.kind.itemsize,
                                                      data, self.site)
            if data is not None and self.init is UNINITIALIZED and self.buffer is memory.psum:
                alloc.fresh = np.ones(data.shape, bool)
            self._mark_block(alloc, block)
        return alloc

    def _mark_block(self, alloc: memory.Alloc, block: Tuple[int, ...]) -> None:
        """Tags a block of a tensor with block dimensions with its tensor and flat block index (trace `tensor=`,
        `blk=`): the compiler allocates the tensor, so its blocks share one buffer generation."""
        if not self.nblock:
            return
        if self.block_group is None:
            self.block_group = [None]
        alloc.group = self.block_group
        if self.nblock == 1:
            alloc.block = int(block[0])
            return
        flat = 0
        for index, size in zip(block, self.shape[:self.nblock]):
            flat = flat * size + int(index)
        alloc.block = flat

    def adopt(self, block: Tuple[int, ...], data: np.ndarray) -> None:
        """Allocate `block` with `data` (a flat array of parts*free elements) as its storage."""
        alloc = self.blocks[block] = memory.Alloc(self.buffer, self.parts, self.free, self.kind.itemsize, data,
                                                  self.site)
        self._mark_block(alloc, block)

    def view(self, dtype: Any = None) -> View:
        """The whole tensor (tiles and HBM tensors) as a View; NKI's `t.view(dtype)` reinterprets the bits."""
        if dtype is not None and not same_kind(self.kind, dtype):
            if self.alias is not None or self.pending is not None or self.nblock:
                return self.view().view(dtype) if not self.nblock else EXECUTION.bitcast(self, dtype)
            return EXECUTION.bitcast(self, dtype)
        if self.alias is not None:
            return self.alias
        if self.pending is not None:
            EXECUTION.flush()
        if self.nblock:
            raise CompileError('a tensor with block dimensions must be indexed down to one block')
        if self.whole is None:
            shape, strides = at_least_2d(list(self.inner_shape), list(self.inner_strides))
            self.whole = View(self, (), 0, shape, strides, one_dim=len(self.inner_shape) == 1)
        return self.whole

    # ----- indexing -----
    def __getitem__(self, key):
        if self.alias is not None:
            return self.alias[key]
        if self.pending is not None:
            EXECUTION.flush()
        if type(key) is not tuple:
            key = (key,)
        # A kernel's loops index its tensors with equal subscripts again and again: a view's geometry within one
        # block is memoised by (the tensor's inner shape, the values of the subscript after the block indices) for
        # subscripts of loop indices, ints, slices of them (nl.ds too) and index expressions (with a Python int
        # constant) only, with in-range int block indices; any other key, and every subscript that raises, takes
        # the full path. One pass over the key takes the block indices (in-range ints or loop indices) and the
        # signature: the values of the rest (ints, loop indices, a slice's bounds and step, an index expression's
        # constant, terms and dimensions).
        nblock = self.nblock
        if len(key) >= nblock:
            shape = self.shape
            block: Any = []
            signature: Any = []
            position = 0
            for k in key:
                t = type(k)
                if position < nblock:
                    if t not in INDEX_INT_TYPES:
                        break
                    b = int(k)
                    if b < 0 or b >= shape[position]:
                        break
                    block.append(b)
                elif t is Affine:
                    if type(k.c) is not int:
                        break
                    signature.append((k.c, k.terms, k.ndim))
                elif t in INDEX_INT_TYPES:
                    signature.append(k)
                elif t is slice:    # (a slice is unhashable before Python 3.12)
                    start, stop, step = k.start, k.stop, k.step
                    if not ((start is None or type(start) in INDEX_INT_TYPES)
                            and (stop is None or type(stop) in INDEX_INT_TYPES)
                            and (step is None or type(step) in INDEX_INT_TYPES)):
                        break
                    signature.append((_SLICE, start, stop, step))
                else:
                    break
                position += 1
            else:
                block = tuple(block)
                memo_key = (self.inner_shape, tuple(signature), self.buffer.on_chip)
                try:
                    found = _SUBSCRIPTS.get(memo_key)
                except TypeError:      # an unhashable shape
                    return self._subscript(key)
                if found is not None:
                    return View(self, block, *found)
                view = self._subscript(key)
                if type(view) is View and _plain_subscript(self.inner_shape, key[nblock:] if nblock else key):
                    _SUBSCRIPTS[memo_key] = (view.offset, view.shape, view.strides, view.index_map,
                                             view.in_bounds, view.tensor_indexed)
                return view
        return self._subscript(key)

    def _subscript(self, key):
        if len(key) == 1 and (key[0] is True or type(key[0]) is Predicate and key[0].holds_everywhere()):
            return self     # `t[c_out < C_out]` with the condition true at every index: the whole tensor
        for k in key:
            if isinstance(k, (Tensor, View, DynamicIndex)):
                if self.buffer.on_chip:       # a dynamic offset (nisa.tensor_copy_dynamic_src / _dst)
                    return dynamic_on_chip(self, key, Tensor)
                if isinstance(k, DynamicIndex):
                    raise CompileError('an HBM tensor takes a dynamic start as an index tile (t[idx[0, 0], :]) '
                                       'or through .ap(scalar_offset=, indirect_dim=), not as nl.ds or a sum')
                return indirect_access(self, key, Tensor)
        nblock = self.nblock
        block = ()
        if nblock:
            if len(key) < nblock and all(isinstance(k, (int, np.integer)) for k in key):
                return BlockPrefix(self, key)          # t[i] of a tensor with two block dimensions
            try:
                block = tuple(map(int, key[:nblock]))
            except TypeError:
                raise CompileError('block dimensions (left of par_dim) must be indexed with integers') from None
            for b, size in zip(block, self.shape):
                if b < 0 or b >= size:
                    raise CompileError(f'block index {b} is out of bounds for a block dimension of size {size}')
            key = key[nblock:]
        if self.buffer.on_chip and key and isinstance(key[0], (int, np.integer)) and not isinstance(key[0], bool) \
                and not any(type(k) is Affine for k in key):
            # an on-chip tile keeps its partition dimension: t[0, 0:m] of a [1, m] tile is that [1, m] row (the
            # NKI known-issues page indexes [1, M] buffers so), not m partitions of one element
            first = int(key[0])
            if not 0 <= first < self.inner_shape[0]:
                raise CompileError(f'index {first} is out of bounds for a dimension of size {self.inner_shape[0]}')
            key = (slice(first, first + 1),) + tuple(key[1:])
        offset, shape, strides, index_map, in_bounds = subscript(self.inner_shape, self.inner_strides, 0, key)
        return View(self, block, offset, shape, strides, index_map, in_bounds, True)

    def __setitem__(self, key, value):
        EXECUTION.assign(self[key], value)

    def ap(self, pattern: Any, offset: Any = 0, **kwargs: Any) -> Any:
        """NKI Beta 2 access pattern over the whole tensor, with its dynamic forms `scalar_offset=` /
        `vector_offset=` on HBM tensors (see views.access_pattern, indirect.scalar_offset_access)."""
        dtype = kwargs.get('dtype')
        if self.hbm_alloc is None or dtype is not None and not same_kind(self.kind, dtype):
            return self.view().ap(pattern, offset, **kwargs)      # (a reinterpreting dtype: see View.ap)
        return access_pattern(self, (), 0, pattern, offset, **kwargs)

    def get_pattern(self) -> List[List[int]]:
        return self.view().get_pattern()

    def __iadd__(self, value):
        EXECUTION.accumulate(self.view(), value)
        return self

    # NKI 0.6 view primitives: views of the whole tensor (see View)
    def permute(self, dims: Any) -> View:
        return self.view().permute(dims)

    def slice(self, dim: Any, start: Any, end: Any = None, step: Any = 1) -> View:
        return self.view().slice(dim, start, end, step)

    def select(self, dim: Any, index: Any) -> View:
        return self.view().select(dim, index)

    def expand_dim(self, dim: Any) -> View:
        return self.view().expand_dim(dim)

    def squeeze_dim(self, dim: Any) -> View:
        return self.view().squeeze_dim(dim)

    def broadcast(self, dim: Any, size: Any) -> View:
        return self.view().broadcast(dim, size)

    def flatten_dims(self, start_dim: Any, end_dim: Any) -> View:
        return self.view().flatten_dims(start_dim, end_dim)

    def reshape_dim(self, dim: Any, shape: Any) -> View:
        return self.view().reshape_dim(dim, shape)

    def rearrange(self, src_pattern: Any, dst_pattern: Any, fixed_sizes: Any = None) -> View:
        return self.view().rearrange(src_pattern, dst_pattern, fixed_sizes)

    def vector_select(self, dim: Any, vector_offset: Any) -> View:
        return self.view().vector_select(dim, vector_offset)

    def is_contiguous(self) -> bool:
        return self.view().is_contiguous()

    def is_indirect(self) -> bool:
        return False

    @property
    def strides(self) -> Tuple[int, ...]:
        """NkiTensor.strides (an attribute on the NKI 2.32+ NkiTensor page): the element step of each dimension,
        as get_pattern pairs them (on chip the partition dimension's step is a partition's size)."""
        return tuple(step for step, _ in self.get_pattern())

    @property
    def offset(self) -> int:
        """NkiTensor.offset (same page): the element offset of the view in its storage; 0 for a whole tensor."""
        return int(self.view().offset)

    # ----- metadata -----
    @property
    def dtype(self) -> Any:
        return self.kind.public

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def reshape(self, shape: Sequence[int]) -> Any:
        if self.buffer.on_chip:
            return EXECUTION.reshape(self.view(), shape)
        shape = tuple(inferred_sizes(shape, self.free, 'reshape', f'the {self.free} elements of a tensor of shape '
                                     f'{self.shape}'))
        if int(np.prod(shape, dtype=np.int64)) != self.free:
            raise CompileError(f'cannot reshape a tensor of shape {self.shape} to {shape}')
        other = Tensor(self.buffer, self.kind, shape, self.site, self.name, self.numerics)
        other.hbm_alloc = self.hbm_alloc
        return other

    def broadcast_to(self, shape: Sequence[int]) -> Any:
        return EXECUTION.broadcast_to(self.view(), shape)

    def indirect(self, index: Any, num_elem: Any = None) -> Any:
        return EXECUTION.indirect(self.view(), index, num_elem)

    def __repr__(self):
        return f'Tensor({self.buffer.name}, shape={self.shape}, dtype={self.kind.public})'


# Integer index types a subscript signature takes as their value (loops.py adds its loop indices, int subclasses).
INDEX_INT_TYPES = {int}
_SLICE = 'slice'     # marks a slice's (start, stop, step) in a subscript signature
# (inner shape, subscript signature) -> a view's geometry after its tensor and block (View's order)
_SUBSCRIPTS: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}


def _plain_subscript(shape: Tuple[Any, ...], key: Tuple[Any, ...]) -> bool:
    """Whether a tensor shape and a subscript (of a signature) hold only Python ints, so that the view's geometry
    does too (numpy integers in the terms of an nl.arange would make it numpy integers)."""
    for d in shape:
        if type(d) is not int:
            return False
    for k in key:
        if type(k) is Affine:
            if type(k.ndim) is not int:
                return False
            for term in k.terms:
                for x in term:
                    if type(x) is not int:
                        return False
    return True


class BlockPrefix:
    """`t[i]` of a tensor with more block dimensions than indices: index it further to reach one block."""
    __slots__ = ('tensor', 'prefix')

    def __init__(self, tensor: Tensor, prefix: Tuple[Any, ...]) -> None:
        self.tensor = tensor
        self.prefix = prefix

    def _key(self, key: Any) -> Tuple[Any, ...]:
        return self.prefix + (key if type(key) is tuple else (key,))

    def __getitem__(self, key: Any) -> Any:
        return self.tensor[self._key(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.tensor[self._key(key)] = value

    @property
    def shape(self) -> Tuple[int, ...]:
        return self.tensor.shape[len(self.prefix):]


def hbm_tensor(array: np.ndarray, buffer: memory.Buffer, site: int = 0, name: str = '', dtype: Any = None) -> Tensor:
    """Wrap a numpy array (kernel input/output or constant) as an HBM tensor sharing its memory. With `dtype` a
    format numpy lacks (nl.float8_e4m3, nl.bfloat16, ...), `array` is its float32 storage and is rounded to the
    format in place."""
    kind = kind_of(array.dtype if dtype is None else dtype)
    if array.dtype != kind.storage:
        raise TypeError(f'a {kind.public} tensor is stored as {kind.storage}, not {array.dtype}')
    if kind.rounding is not None:
        kind.rounding(array)
    tensor = Tensor(buffer, kind, array.shape, site, name)
    data = np.ascontiguousarray(array).reshape(-1)
    tensor.hbm_alloc = memory.Alloc(buffer, 1, tensor.free, kind.itemsize, data, site)
    tensor.hbm_alloc.canonical = tensor
    return tensor


# The fill of memory a kernel declared without initializing it (nl.ndarray): on the device it holds whatever was
# there before, so a kernel must not read it before writing it. NaN in float storage (which every read of it carries
# into the result), a bit pattern far from zero in integer storage.
UNINITIALIZED = object()


def uninitialized(n: int, storage: Any) -> np.ndarray:
    """`n` elements of `storage` as uninitialized memory reads in the simulator."""
    storage = np.dtype(storage)
    if storage.kind in 'fc':
        return uninitialized_float(n, storage)
    if storage.kind == 'b':
        return np.full(n, not AlternateFill.active, storage)
    return uninitialized_integers(n, storage)


def hbm_declared(shape: Sequence[int], dtype: Any, buffer: memory.Buffer, numerics: bool, site: int = 0,
                 name: str = '', initialized: bool = True) -> Tensor:
    """A fresh HBM tensor (kernel output or scratch): zero-filled in numerics mode, or holding uninitialized
    memory (see `uninitialized`)."""
    kind = kind_of(dtype)
    tensor = Tensor(buffer, kind, shape, site, name, numerics)
    data = None if not numerics else np.zeros(tensor.free, kind.storage) if initialized else \
        uninitialized(tensor.free, kind.storage)
    tensor.hbm_alloc = memory.Alloc(buffer, 1, tensor.free, kind.itemsize, data, site)
    tensor.hbm_alloc.canonical = tensor
    return tensor


def shape_only_input(shape: Sequence[int], dtype: Any, buffer: memory.Buffer = memory.shared_hbm, site: int = 0,
                     name: str = '') -> Tensor:
    """A kernel input in timing-only mode: shape and dtype, no data."""
    return hbm_declared(shape, dtype, buffer, False, site, name)

