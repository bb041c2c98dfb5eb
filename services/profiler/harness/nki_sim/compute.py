"""The execution layer's tile operations: copies, memsets, broadcasts and reshapes, elementwise instructions,
reductions, and the assignment forms `dst[...] = value` / `dst[...] += value`.

nl (`language`) and nisa (`isa`) build on these; `Tensor`/`View` operators reach them through
`tile_ops.EXECUTION`, which this module installs on import.
"""
import copy as copy_module
from typing import Any, Callable, Sequence, Union

import numpy as np

from . import memory, runtime
from .affine import Affine
from .dtypes import kind_of, to_storage, write_in_format
from .errors import CompileError
from .ops import ABS_MAX, ABS_MIN, ASSOCIATIVE_ALU, MagnitudeChoice, float32_operands
from .operands import broadcast_shape, fit, on_chip, padded, result_kind, tile_or_scalar, window_shape
from .operands import mask as _mask
from .indirect import IndirectView
from .runtime import (Pending, begin, bind, check_accumulation_format, current, direct, flush, issue, operand,
                      operand_reads)
from .tensors import PARTITION_LIMIT, Tensor, row_major_strides
from .tile_ops import EXECUTION
from .views import View, inferred_sizes


# ----- copies, layout -----
def copy(src: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Tensor:
    run = begin()
    view = on_chip(operand(src), 'nl.copy')
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind
    window, where = _mask(mask, view.shape)
    result = None
    if run.numerics:
        values = view.array(window)
        if values.dtype != kind.storage and values.dtype.kind in 'iu' and kind.storage.kind in 'iu':
            # "When src and dst data types differ: tensor_copy performs an intermediate FP32 cast" (tensor_copy
            # page): int32 to uint8 saturates instead of keeping the low byte
            values = values.astype(np.float32)
        result = to_storage(values, kind.storage)
    pending = issue(run, 'copy', 'auto', [(view, window)], view.shape, kind, result, window)
    pending.where = where
    return pending.tile


copy.activation = lambda x: x  # type: ignore[attr-defined]  # nl.copy as activation


def full_tile(shape: Sequence[int], value: Any, dtype: Any) -> Tensor:
    """A memset tile (used for scalar assignment `tile[...] = c`)."""
    run = begin()
    kind = kind_of(dtype)
    shape = tuple(int(s) for s in shape)
    result = np.full(shape, value, kind.storage) if run.numerics else None
    pending = issue(run, 'memset', 'auto', [], shape, kind, result)
    pending.consts = 1
    return pending.tile


def broadcast_to(src: Any, shape: Sequence[int]) -> Union[Tensor, View]:
    """Partition broadcast ([1, F] -> [P, F]) is a PE instruction; free-axis broadcast is a stride-0 view. `src`
    (the documented keyword) is any tile (`t.broadcast_to(shape)` passes its view, `nl.broadcast_to(t, shape)` the
    tile itself)."""
    view = operand(src)
    shape = tuple(int(s) for s in shape)
    if len(shape) != len(view.shape):
        raise CompileError(f'broadcast_to: cannot broadcast shape {view.shape} to {shape}')
    strides = list(view.strides)
    for axis, (have, want) in enumerate(zip(view.shape, shape)):
        if have != want:
            if have != 1:
                raise CompileError(f'broadcast_to: cannot broadcast shape {view.shape} to {shape}')
            strides[axis] = 0
    if not view.in_bounds:
        view.clip(None)
    if view.shape[0] == shape[0]:
        return View(view.tensor, view.block, view.offset, shape, tuple(strides))
    if not view.tensor.buffer.on_chip:
        raise CompileError(f'broadcast_to: a partition broadcast {view.shape} -> {shape} needs a tile in SBUF or '
                           'PSUM (the nl.broadcast_to page), not an HBM tensor; nl.load the row first')
    run = begin()
    if shape[0] > PARTITION_LIMIT:
        raise CompileError(f'broadcast_to: partition dimension {shape[0]} exceeds {PARTITION_LIMIT}')
    result = np.broadcast_to(view.array(), shape).copy() if run.numerics else None
    pending = issue(run, 'broadcast', 'pe', [(view, None)], shape, view.tensor.kind, result)
    return pending.tile


def reshape_view(view: View, shape: Sequence[int]) -> View:
    count = element_count(view.shape)
    shape = tuple(inferred_sizes(shape, count, 'reshape', f'the {count} elements of a tile of shape {view.shape}'))
    if shape[0] != view.shape[0]:
        raise CompileError(f'reshape of a tile must keep its partition dimension: {view.shape} -> {shape}')
    if element_count(shape) != element_count(view.shape):
        raise CompileError(f'reshape of a tile must keep its number of elements per partition: {view.shape} '
                           f'({element_count(view.shape[1:])} per partition) -> {shape} '
                           f'({element_count(shape[1:])} per partition)')
    expected = 1
    for size, stride in zip(reversed(view.shape[1:]), reversed(view.strides[1:])):
        if size != 1 and stride != expected:
            raise CompileError('reshape needs a tile whose free dimensions are contiguous')
        expected *= size
    strides = [0] * len(shape)
    acc = 1
    for axis in range(len(shape) - 1, 0, -1):
        strides[axis] = acc
        acc *= shape[axis]
    strides[0] = view.strides[0]
    if not view.in_bounds:
        view.clip(None)
    return View(view.tensor, view.block, view.offset, shape, tuple(strides))


# ----- elementwise -----
def element_count(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def elementwise(op: str, eng: str, fn: Callable[..., Any], args: Sequence[Any], dtype: Any,
                mask_predicate: Any, cse_key: Any = None, folds: Sequence[int] = (), positional: bool = False,
                flat_operands: bool = False, alu_ops: Sequence[Any] = ()) -> Tensor:
    """Issue an elementwise instruction over tiles/scalars broadcast partition-first. `cse_key` (the operation and
    its operands' identities) marks a repeat of the same computation on unchanged inputs within the load-reuse
    scope as `cse=1`: the compiler computes a loop-invariant result once. `folds`: positions in `args` of the
    operands of the last, associative operation; written back in place, the instruction is a reduction
    (`acc = max(acc, x)`), which different iterations of an affine_range loop may repeat. `positional`: `fn`
    depends on where an element lies in the iteration space (affine_select), so it also gets the iteration space's
    shape and the mask's window (`fn(*arrays, shape=..., window=...)`; window None when unmasked).
    `flat_operands` (nisa.tensor_tensor: "the same partition axis size and the same number of elements per
    partition"): tiles of equal partition size and equal free element count but different shapes, e.g. a
    (P, 16) tile and a (P, 1, 16) access pattern, pair their elements in row-major order within each partition
    (the result has the first tile's shape) instead of broadcasting into an outer product. `alu_ops`: the ALU
    operators `fn` applies; when all are arithmetic, integer operands reach `fn` as float32 (ops.float32_operands)."""
    run = begin()
    values = [tile_or_scalar(a) for a in args]
    views = [v for v in values if isinstance(v, View)]
    if not views:
        raise CompileError('an elementwise operation needs at least one tile operand')
    for v in views:
        on_chip(v, 'an elementwise operation')
    flat = flat_operands and _flat_pairing(views)
    shape = views[0].shape if flat else broadcast_shape(views)
    for arg, value in zip(args, values):
        if isinstance(arg, Affine) and value.shape[0] == 1 < shape[0]:
            raise CompileError(f'{op}: an index expression of one partition {value.shape} used as values against '
                               f'{shape[0]} partitions is a partition broadcast, which the compiler refuses '
                               '("Unexpected partition broadcast!"): place it across the partitions with '
                               'nl.broadcast_to(expr, shape) or index an nl.mgrid')
    kind = result_kind(dtype, views)
    window, where = _mask(mask_predicate, shape)
    if flat and window is not None:
        raise CompileError(f'{op}: a mask on operands of different shapes {[v.shape for v in views]} (equal '
                           'elements per partition) is not modelled; give the operands one shape')
    reads = operand_reads(views, window, shape)
    result = None
    if run.numerics:
        ndim = len(shape)
        arrays = []
        read_iter = iter(reads)
        for v in values:
            if isinstance(v, View):
                view, w = next(read_iter)
                arrays.append(view.array(w).reshape(shape) if flat else padded(view.array(w), ndim))
            else:
                arrays.append(v)
        arrays = float32_operands(arrays, *alu_ops)
        with np.errstate(all='ignore'):
            computed = fn(*arrays, shape=shape, window=window) if positional else fn(*arrays)
            result = fit(computed, kind, window_shape(window, shape))
    pending = issue(run, op, eng, reads, shape, kind, result, window)
    pending.where = where
    pending.consts = len(values) - len(views)
    if op == 'tensor_tensor' and alu_ops:
        pending.alu = ','.join(alu_name(fn) for fn in alu_ops)
    if folds:
        positions = [i for i, v in enumerate(values) if isinstance(v, View)]
        pending.folds = tuple(reads[positions.index(i)] for i in folds if i in positions)
    if cse_key is not None:
        pending.cse_key = cse_key + (kind.public, window, run.reuse_scope)
    return pending.tile


def alu_name(fn: Any) -> str:
    """An ALU operator's name as the trace's `alu` key writes it (numpy's: add, subtract, multiply, divide, ...)."""
    name = getattr(fn, '__name__', '')
    return name if name and all('a' <= c <= 'z' or c == '_' for c in name) else 'other'


def _flat_pairing(views: Sequence[View]) -> bool:
    """Whether tile operands differ in shape while sharing the partition size and the free element count."""
    first = views[0].shape
    if all(v.shape == first for v in views):
        return False
    return all(v.shape[0] == first[0] and free_elements(v) == free_elements(views[0]) for v in views)


def _astype(src: Any, dtype: Any) -> Tensor:
    return copy(src, dtype=dtype)


def _itemsize(tile: Any) -> int:
    """nki.tensor.itemsize (Beta 1): bytes per element of the tensor's NKI format. Beta 2's NkiTensor lists no
    itemsize (its attributes are buffer, dtype, name, ndim, offset, shape, size, strides), so a Beta 2 kernel
    keeps the COMPILE_ERROR naming the attribute."""
    if runtime.RUN is not None and runtime.RUN.beta2:
        raise AttributeError('itemsize')     # TileOperators.__getattr__ refuses it by name
    kind = tile.kind if isinstance(tile, Tensor) else tile.tensor.kind
    return int(kind.itemsize)


def expand_dims_view(data: Any, axis: Any, name: str = 'nl.expand_dims') -> View:
    """A view of data with a unit free axis inserted at `axis` (no instruction): nl.expand_dims and the Beta 1
    method t.expand_dims."""
    view = operand(data)
    shape = list(view.shape)
    position = int(axis) if int(axis) >= 0 else len(shape) + 1 + int(axis)
    if not 1 <= position <= len(shape):
        raise CompileError(f'{name}: axis {axis} must be a free axis of a tile of shape {view.shape}')
    shape.insert(position, 1)
    return reshape_view(view, shape)


def _assert_shape(tile: Any, shape: Any) -> Any:
    expected = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if tuple(tile.shape) != expected:
        raise CompileError(f'assert_shape: the tensor has shape {tuple(tile.shape)}, not {expected}')
    return tile


def _beta1_method(tile: Any, name: str) -> Callable[..., Any]:
    """nki.tensor's Beta 1 methods expand_dims(axis) and assert_shape(shape) (the Beta 1 API reference's method
    table). Beta 2's NkiTensor lists neither (it has expand_dim), so a Beta 2 kernel keeps the COMPILE_ERROR naming
    the attribute."""
    if runtime.RUN is not None and runtime.RUN.beta2:
        raise AttributeError(name)     # TileOperators.__getattr__ refuses it by name
    if name == 'expand_dims':
        return lambda axis: expand_dims_view(tile, axis, 't.expand_dims')
    return lambda shape: _assert_shape(tile, shape)


def deterministic_dropout(name: str, x: Any, rate: Any, dtype: Any, mask_predicate: Any) -> Tensor:
    """Dropout (zero elements with probability `rate`, no rescaling) at the rates whose result is known: 0 keeps
    x, 1 zeroes it. A random drop cannot be checked against a reference, so it is refused."""
    if not isinstance(rate, (int, float, np.number)) or isinstance(rate, bool) or rate not in (0, 1):
        raise CompileError(f'{name}: a random drop (rate {rate!r}) cannot be checked against a reference; the '
                           'simulator runs rate 0 (keep all) and 1 (drop all) only')
    operation = _identity if rate == 0 else _zeros
    return elementwise('activation', 'act', operation, (x,), dtype, mask_predicate)


def _identity(values: Any) -> Any:
    return values


def _zeros(values: Any) -> Any:
    return np.zeros_like(values)


def _binary(name, ufunc):
    def operation(x, y, dtype=None, mask=None, **kwargs):
        if isinstance(ufunc, MagnitudeChoice):
            ufunc.require_generation()
        tiles = [v for v in (x, y) if isinstance(v, (Tensor, View))]
        if len(tiles) == 2:
            _same_partitions_in_beta2(name, operand(tiles[0]), operand(tiles[1]))
        op = 'tensor_tensor'
        if len(tiles) < 2 or any(free_elements(operand(t)) == 1 for t in tiles) and \
                free_elements(operand(tiles[0])) != free_elements(operand(tiles[1])):
            op = 'tensor_scalar'
        return elementwise(op, 'auto', ufunc, (x, y), dtype, mask, folds=fold_positions(ufunc, 0, 1),
                           alu_ops=(ufunc,))
    operation.__name__ = name
    operation.alu = ufunc
    return operation


def _same_partitions_in_beta2(name: str, a: View, b: View) -> None:
    """A Beta 2 (`nki`) kernel's elementwise arithmetic on two tiles (`nl.subtract(x, y)`, `x - y`, `dst[...] +=
    t`) needs the same partition size: the NKI 0.3.0 compiler's verifier refuses "partition-mismatched
    tensor-tensor arith ((1,1) - (P_TILE,1), (P_TILE,1) - (1,NVIR))" (a public BLAS library's device record,
    whose fix lifts every operand with nl.broadcast_to first), and the Beta 2 nki.language pages no longer call
    the operands "broadcastable" as Beta 1's did. A free-axis broadcast ((P, N) with (P, 1)) stays; a Beta 1
    kernel keeps the partition broadcast its nl.add page shows."""
    if a.shape[0] == b.shape[0] or not current().beta2:
        return
    raise CompileError(
        f'nl.{name}: tiles of shapes {tuple(a.shape)} and {tuple(b.shape)} differ in partition size; in an nki '
        '(Beta 2) kernel the compiler refuses a partition broadcast in tensor-tensor arithmetic (both tiles must '
        'have the same partition size): lift the smaller one first with nl.broadcast_to(t, shape)')


def fold_positions(ufunc: Any, *positions: int) -> Sequence[int]:
    """The operand positions that make an in-place write a reduction, if `ufunc` is associative."""
    return positions if ufunc in ASSOCIATIVE_ALU else ()


def free_elements(view: View) -> int:
    return element_count(view.shape[1:])


add = _binary('add', np.add)
subtract = _binary('subtract', np.subtract)
multiply = _binary('multiply', np.multiply)
divide = _binary('divide', np.divide)
maximum = _binary('maximum', np.maximum)
minimum = _binary('minimum', np.minimum)
power = _binary('power', np.power)
mod = _binary('mod', np.mod)
# nl.fmod (the Beta 2 stub): the remainder with the dividend's sign (numpy.fmod). Not an ALU operator: no NKI page
# lists fmod among the op= operators, so `op=nl.fmod` is refused as an unsupported ALU operator.
fmod = _binary('fmod', np.fmod)
del fmod.alu
equal = _binary('equal', np.equal)
not_equal = _binary('not_equal', np.not_equal)
greater = _binary('greater', np.greater)
greater_equal = _binary('greater_equal', np.greater_equal)
less = _binary('less', np.less)
less_equal = _binary('less_equal', np.less_equal)
logical_and = _binary('logical_and', np.logical_and)
logical_or = _binary('logical_or', np.logical_or)
logical_xor = _binary('logical_xor', np.logical_xor)
bitwise_and = _binary('bitwise_and', np.bitwise_and)
bitwise_or = _binary('bitwise_or', np.bitwise_or)
bitwise_xor = _binary('bitwise_xor', np.bitwise_xor)
left_shift = _binary('left_shift', np.left_shift)
right_shift = _binary('right_shift', np.right_shift)
abs_max = _binary('abs_max', ABS_MAX)      # NKI 2.31+: the input of larger magnitude, signed (tie: y)
abs_min = _binary('abs_min', ABS_MIN)      # NKI 2.31+: the input of smaller magnitude, signed (tie: y)


# ----- reductions -----
def reduce(ufunc: np.ufunc, x: Any, axis: Any, dtype: Any = None, mask_predicate: Any = None, keepdims: bool = False,
           negate: bool = False, mean: bool = False, eng: str = 'auto', variance: bool = False) -> Tensor:
    """Reduce a tile over `axis` (free axes: tensor_reduce; axis 0: a partition reduction to one partition).
    `variance`: the population variance (as numpy.var) instead of the ufunc's reduction."""
    run = begin()
    view = on_chip(operand(x), 'a reduction')
    ndim = len(view.shape)
    listed = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    for a in listed:
        if not -ndim <= int(a) < ndim:
            # numpy's AxisError (the reductions are "similar to numpy"): never wrapped around onto another axis
            raise CompileError(f'reduction axis {int(a)} is out of range for a tile of shape {view.shape} '
                               f'({ndim} dimensions)')
    axes = tuple(sorted({int(a) % ndim for a in listed}))
    kind = result_kind(dtype, [view])
    window, where = _mask(mask_predicate, view.shape)
    if where is not None:
        if variance:
            raise CompileError('nl.var with an elementwise mask is not supported by the simulator (a box mask is)')
        view = view.checked_under(where)
    kept = [a for a in range(ndim) if keepdims or a == 0 or a not in axes]
    shape_list = [1 if a in axes else view.shape[a] for a in kept]
    window_list = None if window is None else [(0, 1) if a in axes else window[a] for a in kept]
    if len(shape_list) < 2:
        shape_list.append(1)
        if window_list is not None:
            window_list.append((0, 1))
    out_shape = tuple(shape_list)
    out_window = None if window_list is None else tuple(window_list)
    result: Any = None
    if run.numerics:
        if where is None:
            data = float32_operands([view.array(window)], ufunc)[0]
            if data.size == 0:      # a mask that keeps nothing (`mask=False`): nothing is read, nothing reduced
                kept_shape = tuple(1 if a in axes else n for a, n in enumerate(data.shape))
                result = np.full(kept_shape, _identity_of(ufunc, view.tensor.kind.storage), dtype=np.float32)
            else:
                with np.errstate(all='ignore'):
                    result = ufunc.reduce(data, axis=axes, keepdims=True)
        else:       # an elementwise mask: masked-out elements take no part (their indices may be out of bounds)
            identity = _identity_of(ufunc, view.tensor.kind.storage)
            data = float32_operands([view.masked_array(where, identity)], ufunc)[0]
            with np.errstate(all='ignore'):
                result = ufunc.reduce(data, axis=axes, keepdims=True, initial=identity, where=where)
        if mean:
            result = result / np.prod([data.shape[a] for a in axes])
        if variance:  # in float32, as the engines compute (NKI common fields: arithmetic is float32)
            with np.errstate(all='ignore'):
                result = np.var(data.astype(np.float32), axis=axes, keepdims=True, dtype=np.float32)
        if negate:
            result = -result
        result = fit(result.reshape(window_shape(out_window, out_shape)), kind, window_shape(out_window, out_shape))
    pending = issue(run, 'tensor_reduce', 'pool' if 0 in axes else eng, [(view, window)], out_shape, kind, result,
                    out_window)
    if not variance:        # the Vector Engine's rate depends on the operator (trace `alu`)
        pending.alu = alu_name(ufunc)
    pending.where = None if where is None else where.any(axis=axes, keepdims=True).reshape(out_shape)
    return pending.tile


def _identity_of(ufunc: np.ufunc, dtype: np.dtype) -> Any:
    """The value a reduction starts from (what a masked-out element contributes)."""
    if ufunc.identity is not None:
        return ufunc.identity
    floating = dtype.kind == 'f'
    if ufunc is np.maximum:
        return -np.inf if floating else np.iinfo(dtype).min
    if ufunc is np.minimum:
        return np.inf if floating else np.iinfo(dtype).max
    raise CompileError(f'a masked {ufunc.__name__} reduction has no starting value')


# ----- stores and assignment -----
def store_tile(target: View, value: Any, mask: Any = None) -> None:
    """One DMA of a tile (SBUF, or PSUM through a copy) into the HBM view `target`: nl.store, and an assignment
    into HBM."""
    run = begin()
    source = operand(value)
    if source.tensor.buffer is memory.psum:
        source = operand(copy(source))
    if element_count(source.shape) != element_count(target.shape) or source.shape[0] != target.shape[0]:
        raise CompileError(f'nl.store: value of shape {source.shape} does not fit destination {target.shape}')
    window, where = _mask(mask, source.shape)
    if window is not None and source.shape != target.shape:
        raise CompileError('nl.store with a mask needs value and destination of the same shape')
    if run.numerics:
        data = source.array(window)
        out = target.writable(window)
        if data.shape != out.shape:
            data = data.reshape(out.shape)
        # the DMA casts to the destination's format (a bfloat16 or fp8 output holds the rounded values)
        write_in_format(out, data, target.tensor.kind, where)
        target.write_back(window, out, where)
        if isinstance(target, IndirectView):      # a scatter: out is the gathered copy
            target.scatter(out, window)
    reads = [(source, window)] + ([(target.index, None)] if isinstance(target, IndirectView) else [])
    pending = Pending('store', 'dma', run.line(), reads, None, None, window)
    pending.dma = 'store'
    direct(run, pending, target, window,
           where if where is not None and source.shape == target.shape and not isinstance(target, IndirectView)
           else None)


def assign(dst: View, value: Any) -> None:
    """`dst[...] = value`: bind a pending result, or copy / memset into dst. Into HBM, the value (a tile) is
    stored by a DMA, as nl.store stores it: no NKI page documents the form, but kernels compiled with NKI 0.6.0
    ran it exactly on a trn2 (docs/simulator.md, round 11)."""
    run = current()
    if not dst.tensor.buffer.on_chip:
        if isinstance(value, (int, float, np.number)):
            value = full_tile(dst.shape, value, dst.dtype)
        store_tile(dst, value)
        return
    pending = run.pending
    if isinstance(value, Tensor) and value.pending is not None and value.pending is pending:
        bind(run, pending, dst, accumulate=False)
        return
    if isinstance(value, View) and value.same_region(dst):
        return
    if isinstance(value, (Tensor, View)):
        tile = copy(value)
    elif isinstance(value, (int, float, np.number)):
        tile = full_tile(dst.shape, value, dst.dtype)
    else:
        raise CompileError(f'cannot assign a {type(value).__name__} to a tile; assign a tile or a scalar')
    bind(run, tile.pending, dst, accumulate=False)


def accumulate(dst: View, value: Any) -> None:
    """`dst[...] += value`: PSUM accumulation of a matmul, else a read-add-write tensor_tensor."""
    run = current()
    pending = run.pending
    if isinstance(value, Tensor) and value.pending is not None and value.pending is pending \
            and pending.op in ('matmul', 'transpose') and dst.tensor.buffer is memory.psum:
        check_accumulation_format(pending.op, dst)
        bind(run, pending, dst, accumulate=True)
        return
    tile = add(dst, value)
    tile.pending.accumulating = True
    bind(run, tile.pending, dst, accumulate=False)


BINARY = {operation.__name__: operation for operation in (
    add, subtract, multiply, divide, maximum, minimum, power, mod, equal, not_equal, greater, greater_equal, less,
    less_equal, logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor, left_shift,
    right_shift)}


def negative_tile(x: Any) -> Tensor:
    """Unary minus: the activation instruction nl.negative issues."""
    return elementwise('activation', 'act', np.negative, (x,), None, None)


def _binary_operator(name, x, y):
    return BINARY[name](x, y)


def indirect(view: View, index: Any, num_elem: Any = None) -> Tensor:
    """`data.indirect(idx_tile, num_elem)`, tensor indirection (TI) on the vector engine: within each group of 16
    partitions starting at row s, output column i of partition p reads data[p, idx[s + i % 16, i // 16]]."""
    run = begin()
    data = on_chip(view, '.indirect')
    offsets = on_chip(operand(index), '.indirect')
    rows = data.shape[0]
    count = int(num_elem) if num_elem is not None else offsets.free_size * 16
    if rows % 16 or offsets.shape[0] != rows or offsets.free_size * 16 < count:
        raise CompileError(f'.indirect: {rows} data partitions and an index tile of shape {offsets.shape} do not '
                           f'give {count} offsets per partition (16 per column of each 16-partition group)')
    result = None
    if run.numerics:
        flat = data.array().reshape(rows, -1)
        idx = offsets.array().reshape(rows, -1).astype(np.int64)
        column = np.arange(count)
        source_rows = (np.arange(rows) // 16 * 16)[:, None] + (column % 16)[None, :]
        picks = idx[source_rows, (column // 16)[None, :]]
        if picks.size and (picks.min() < 0 or picks.max() >= flat.shape[1]):
            raise IndexError(f'.indirect: an offset is outside the {flat.shape[1]} elements of a partition')
        result = np.take_along_axis(flat, picks, axis=1)
    return issue(run, 'copy', 'dve', [(data, None), (offsets, None)], (rows, count), data.tensor.kind,
                 result).tile


def bitcast(tensor: Tensor, dtype: Any) -> Tensor:
    """`t.view(dtype)`: the tensor's storage read as `dtype` (no instruction; the allocations are shared, so
    dependencies and SBUF use stay those of t). Between formats of one storage size (float32 / int32 / tfloat32)
    the bits are read directly. Otherwise (another element size, such as float32 scales read as 4 float8_e4m3
    bytes each, or a format numpy lacks, whose storage is float32) the tensor's innermost dimension holds the same
    bytes in more or fewer elements, and reads decode the allocation's bit patterns exactly (dtypes.to_bytes /
    from_bytes); such a view, of an on-chip or an HBM tensor (vLLM-neuron's topk_reduce reads an int32 packed in two
    bfloat16 HBM columns), can be read but not written (views.destination)."""
    kind = kind_of(dtype)
    source = tensor.source if tensor.source is not None else tensor
    if kind.itemsize == tensor.kind.itemsize and kind.storage.itemsize == source.kind.storage.itemsize \
            and tensor.source is None:
        other = copy_module.copy(tensor)
        other.kind = kind
        other.whole = None
        other.pending = None
        other.alias = None
        return other
    old, new = tensor.kind.itemsize, kind.itemsize
    inner = tensor.inner_shape
    if len(inner) < 2 or (inner[-1] * old) % new:
        raise CompileError(f'.view({kind.public}): the innermost dimension of a {tensor.kind.public} tensor of '
                           f'shape {tensor.shape} does not hold a whole number of {new}-byte elements')
    other = copy_module.copy(tensor)
    other.kind = kind
    other.source = source
    other.whole = None
    other.pending = None
    other.alias = None
    other.inner_shape = inner[:-1] + (inner[-1] * old // new,)
    other.shape = tensor.shape[:tensor.nblock] + other.inner_shape
    other.inner_strides = row_major_strides(other.inner_shape)
    other.free = tensor.free * old // new
    return other


EXECUTION.flush = flush
EXECUTION.assign = assign
EXECUTION.accumulate = accumulate
EXECUTION.binary = _binary_operator
EXECUTION.negate = negative_tile
EXECUTION.broadcast_to = broadcast_to
EXECUTION.reshape = reshape_view
EXECUTION.indirect = indirect
EXECUTION.bitcast = bitcast
EXECUTION.astype = _astype
EXECUTION.itemsize = _itemsize
EXECUTION.beta1_method = _beta1_method
