"""neuronxcc.nki.language (nl): declarations, DMA, and the high-level tile operations, over numpy.

Every operation issues one trace instruction (nl.matmul without transpose_x issues the transpose, PSUM
eviction copy and matmul the compiler would). Numerics are computed in the storage dtype (fp32 for all
NKIBench kernels) and skipped in timing-only mode.
"""
import numpy as np

from . import memory, runtime
from .affine import arange, ds, mgrid  # noqa: F401  (re-exported as nl.*)
from .dtypes import bfloat16, float8_e4m3, float8_e5m2, kind_of, tfloat32  # noqa: F401  (nl.* dtypes)
from .errors import CompileError
from .loops import affine_range, is_first_iteration, sequential_range, static_range  # noqa: F401
from .operands import (broadcast_shape, fit, on_chip, padded, result_kind, tile_or_scalar,
                       window_shape)
from .operands import mask as _mask
from .ops import alu
from .runtime import begin, issue, operand, operand_reads
from .tensors import PARTITION_LIMIT, Tensor, hbm_declared, hbm_tensor, par_dim  # noqa: F401
from .views import View


# ----- buffers and dtypes -----
sbuf = memory.sbuf
psum = memory.psum
hbm = memory.hbm
shared_hbm = memory.shared_hbm
private_hbm = memory.private_hbm

float32 = np.float32
float16 = np.float16
float64 = np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
bool_ = np.bool_


class tile_size:
    pmax = 128
    psum_fmax = 512
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_partition_max = 128


def finfo(dtype):
    return np.finfo(kind_of(dtype).storage)


# ----- SPMD -----
def program_id(axis):
    ids = runtime.current().program_ids
    return ids[axis] if axis < len(ids) else 0


def num_programs(axes=None):
    grid = runtime.current().grid
    if axes is None:
        return int(np.prod(grid)) if grid else 1
    return grid[axes] if axes < len(grid) else 1


def program_ndim():
    return len(runtime.current().grid)


def spmd_dim(*sizes):
    return int(np.prod([int(s) for s in sizes]))


def nc(count):
    return count


def device_print(*args, **kwargs):
    pass


# ----- declarations -----
def _declare(shape, dtype, buffer, name, fill):
    run = runtime.current()
    line = run.line()
    if buffer is None:
        buffer = memory.sbuf
    if not isinstance(buffer, memory.Buffer):
        raise CompileError(f'unknown buffer {buffer!r}', line)
    if isinstance(shape, int):
        shape = (shape,)
    if buffer.on_chip:
        tensor = Tensor(buffer, kind_of(dtype), shape, line, name, run.numerics)
        tensor.init = fill
        return tensor
    if buffer is memory.shared_hbm:
        ordinal = run.shared_ordinal
        run.shared_ordinal += 1
        if ordinal < len(run.shared_outputs):
            return run.shared_outputs[ordinal]
    tensor = hbm_declared(tuple(int(d) for d in shape), dtype, buffer, run.numerics, line, name)
    if fill:
        tensor.hbm_alloc.data[...] = fill
    if buffer is memory.shared_hbm:
        run.shared_outputs.append(tensor)
    return tensor


def ndarray(shape, dtype, buffer=None, name='', **kwargs):
    return _declare(shape, dtype, buffer, name, 0)


def zeros(shape, dtype, buffer=None, name='', lazy_initialization=False, **kwargs):
    return _declare(shape, dtype, buffer, name, 0)


def ones(shape, dtype, buffer=None, name='', **kwargs):
    return _declare(shape, dtype, buffer, name, 1)


def full(shape, fill_value, dtype, buffer=None, name='', **kwargs):
    return _declare(shape, dtype, buffer, name, fill_value)


def zeros_like(a, dtype=None, buffer=None, name='', **kwargs):
    return _declare(a.shape, dtype or a.dtype, buffer or a.buffer, name, 0)


def empty_like(a, dtype=None, buffer=None, name='', **kwargs):
    return zeros_like(a, dtype, buffer, name)


ndarray_like = empty_like


def shared_constant(constant, dtype=None, **kwargs):
    array = np.asarray(constant, dtype=kind_of(dtype).storage if dtype is not None else None)
    run = runtime.current()
    return hbm_tensor(array, memory.constant_hbm, run.line(), 'constant')


# ----- DMA -----
def load(src, dtype=None, mask=None, **kwargs):
    run = begin()
    view = operand(src)
    if view.tensor.buffer.on_chip:
        raise CompileError('nl.load reads HBM; use nl.copy to copy on-chip tiles')
    shape = view.shape
    if shape[0] > PARTITION_LIMIT:
        raise CompileError(f'nl.load of shape {shape}: partition dimension {shape[0]} exceeds {PARTITION_LIMIT}')
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind
    window, where = _mask(mask, shape)
    result = None
    if run.numerics:
        result = view.array(window).astype(kind.storage)
    pending = issue(run, 'load', 'dma', [(view, window)], shape, kind, result, window)
    pending.where = where
    pending.dma = 'load'
    pending.cse_key = ('load', view.alloc.serial, view.alloc.version, view.offset, view.shape, view.strides,
                       kind.public, window)
    return pending.tile


def load_transpose2d(src, dtype=None, **kwargs):
    run = begin()
    view = operand(src)
    if view.tensor.buffer.on_chip or len(view.shape) != 2:
        raise CompileError('nl.load_transpose2d reads a 2-D HBM tensor')
    if not view.in_bounds:
        view.clip(None)
    transposed = View(view.tensor, view.block, view.offset, view.shape[::-1], view.strides[::-1])
    if transposed.shape[0] > PARTITION_LIMIT:
        raise CompileError(f'nl.load_transpose2d: partition dimension {transposed.shape[0]} exceeds '
                           f'{PARTITION_LIMIT}')
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind
    result = transposed.array().astype(kind.storage) if run.numerics else None
    pending = issue(run, 'load', 'dma', [(transposed, None)], transposed.shape, kind, result)
    pending.dma = 'load'
    return pending.tile


def store(dst, value, mask=None, **kwargs):
    run = begin()
    target = operand(dst)
    if target.tensor.buffer.on_chip:
        raise CompileError('nl.store writes HBM; assign to on-chip tiles instead')
    source = operand(value)
    if source.tensor.buffer is memory.psum:
        source = operand(copy(source))
    if _count(source.shape) != _count(target.shape) or source.shape[0] != target.shape[0]:
        raise CompileError(f'nl.store: value of shape {source.shape} does not fit destination {target.shape}')
    window, where = _mask(mask, source.shape)
    if window is not None and source.shape != target.shape:
        raise CompileError('nl.store with a mask needs value and destination of the same shape')
    if run.numerics:
        data = source.array(window)
        out = target.array(window)
        if data.shape != out.shape:
            data = data.reshape(out.shape)
        if where is not None:
            np.copyto(out, data, where=where, casting='unsafe')
        else:
            out[...] = data
    pending = runtime.Pending('store', 'dma', run.line(), [(source, window)], None, None, window)
    pending.dma = 'store'
    runtime.direct(run, pending, target, window)


# ----- copies, layout -----
def copy(src, dtype=None, mask=None, **kwargs):
    run = begin()
    view = on_chip(operand(src), 'nl.copy')
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind
    window, where = _mask(mask, view.shape)
    result = view.array(window).astype(kind.storage) if run.numerics else None
    pending = issue(run, 'copy', 'auto', [(view, window)], view.shape, kind, result, window)
    pending.where = where
    return pending.tile


copy.activation = lambda x: x


def full_tile(shape, value, dtype):
    """A memset tile (used for scalar assignment `tile[...] = c`)."""
    run = begin()
    kind = kind_of(dtype)
    shape = tuple(int(s) for s in shape)
    result = np.full(shape, value, kind.storage) if run.numerics else None
    pending = issue(run, 'memset', 'auto', [], shape, kind, result)
    pending.consts = 1
    return pending.tile


def broadcast_to(view, shape):
    """Partition broadcast ([1, F] -> [P, F]) is a PE instruction; free-axis broadcast is a stride-0 view."""
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
    run = begin()
    if shape[0] > PARTITION_LIMIT:
        raise CompileError(f'broadcast_to: partition dimension {shape[0]} exceeds {PARTITION_LIMIT}')
    result = np.broadcast_to(view.array(), shape).copy() if run.numerics else None
    pending = issue(run, 'broadcast', 'pe', [(view, None)], shape, view.tensor.kind, result)
    return pending.tile


def reshape_view(view, shape):
    shape = tuple(int(s) for s in shape)
    if shape[0] != view.shape[0] or _count(shape) != _count(view.shape):
        raise CompileError(f'reshape of a tile must keep its partition dimension: {view.shape} -> {shape}')
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
def _count(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def elementwise(op, eng, fn, args, dtype, mask_predicate):
    """Issue an elementwise instruction over tiles/scalars broadcast partition-first."""
    run = begin()
    values = [tile_or_scalar(a) for a in args]
    views = [v for v in values if isinstance(v, View)]
    if not views:
        raise CompileError('an elementwise operation needs at least one tile operand')
    for v in views:
        on_chip(v, 'an elementwise operation')
    shape = broadcast_shape(views)
    kind = result_kind(dtype, views)
    window, where = _mask(mask_predicate, shape)
    reads = operand_reads(views, window, shape)
    result = None
    if run.numerics:
        ndim = len(shape)
        arrays = []
        read_iter = iter(reads)
        for v in values:
            if isinstance(v, View):
                view, w = next(read_iter)
                arrays.append(padded(view.array(w), ndim))
            else:
                arrays.append(v)
        with np.errstate(all='ignore'):
            result = fit(fn(*arrays), kind, window_shape(window, shape))
    pending = issue(run, op, eng, reads, shape, kind, result, window)
    pending.where = where
    pending.consts = len(values) - len(views)
    return pending.tile


def _binary(name, ufunc):
    def operation(x, y, dtype=None, mask=None, **kwargs):
        tiles = [v for v in (x, y) if isinstance(v, (Tensor, View))]
        op = 'tensor_tensor'
        if len(tiles) < 2 or any(_free(operand(t)) == 1 for t in tiles) and \
                _free(operand(tiles[0])) != _free(operand(tiles[1])):
            op = 'tensor_scalar'
        return elementwise(op, 'auto', ufunc, (x, y), dtype, mask)
    operation.__name__ = name
    operation.alu = ufunc
    return operation


def _free(view):
    return _count(view.shape[1:])


add = _binary('add', np.add)
subtract = _binary('subtract', np.subtract)
multiply = _binary('multiply', np.multiply)
divide = _binary('divide', np.divide)
maximum = _binary('maximum', np.maximum)
minimum = _binary('minimum', np.minimum)
power = _binary('power', np.power)
mod = _binary('mod', np.mod)
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


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x * x * x)))


_UNARY = {
    'exp': np.exp, 'log': np.log, 'sqrt': np.sqrt, 'rsqrt': lambda x: 1.0 / np.sqrt(x),
    'square': np.square, 'abs': np.abs, 'negative': np.negative, 'tanh': np.tanh, 'sin': np.sin,
    'cos': np.cos, 'arctan': np.arctan, 'sign': np.sign, 'floor': np.floor, 'ceil': np.ceil,
    'trunc': np.trunc, 'reciprocal': lambda x: 1.0 / x, 'sigmoid': _sigmoid,
    'relu': lambda x: np.maximum(x, 0), 'silu': lambda x: x * _sigmoid(x), 'gelu': _gelu_tanh,
    'gelu_apprx_tanh': _gelu_tanh, 'softplus': lambda x: np.log1p(np.exp(x)),
    'erf': None, 'invert': np.invert, 'logical_not': np.logical_not,
}


def _unary(name, fn):
    def operation(x, dtype=None, mask=None, **kwargs):
        if fn is None:
            raise CompileError(f'nl.{name} is not supported by the simulator')
        return elementwise('activation', 'act', fn, (x,), dtype, mask)
    operation.__name__ = name
    operation.activation = fn
    return operation


for _name, _fn in _UNARY.items():
    globals()[_name] = _unary(_name, _fn)


def where(condition, x, y, dtype=None, mask=None, **kwargs):
    return elementwise('select', 'auto', np.where, (condition, x, y), dtype, mask)


# ----- reductions -----
def _reduction(name, ufunc, mean=False):
    def operation(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
        return reduce(ufunc, x, axis, dtype, mask, keepdims, mean=mean)
    operation.__name__ = name
    operation.alu = ufunc
    return operation


def reduce(ufunc, x, axis, dtype=None, mask_predicate=None, keepdims=False, negate=False, mean=False,
           eng='auto'):
    """Reduce a tile over `axis` (free axes: tensor_reduce; axis 0: a partition reduction to one partition)."""
    run = begin()
    view = on_chip(operand(x), 'a reduction')
    ndim = len(view.shape)
    axes = tuple(sorted({a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}))
    kind = result_kind(dtype, [view])
    window, where = _mask(mask_predicate, view.shape)
    kept = [a for a in range(ndim) if keepdims or a == 0 or a not in axes]
    out_shape = [1 if a in axes else view.shape[a] for a in kept]
    out_window = None if window is None else [(0, 1) if a in axes else window[a] for a in kept]
    if len(out_shape) < 2:
        out_shape.append(1)
        if out_window is not None:
            out_window.append((0, 1))
    out_shape = tuple(out_shape)
    out_window = None if out_window is None else tuple(out_window)
    result = None
    if run.numerics:
        data = view.array(window)
        with np.errstate(all='ignore'):
            result = ufunc.reduce(data, axis=axes, keepdims=True)
            if mean:
                result = result / np.prod([data.shape[a] for a in axes])
            if negate:
                result = -result
        result = fit(result.reshape(window_shape(out_window, out_shape)), kind, window_shape(out_window, out_shape))
    pending = issue(run, 'tensor_reduce', 'pool' if 0 in axes else eng, [(view, window)], out_shape, kind, result,
                    out_window)
    pending.where = None if where is None else where.any(axis=axes, keepdims=True).reshape(out_shape)
    return pending.tile


sum = _reduction('sum', np.add)
max = _reduction('max', np.maximum)
min = _reduction('min', np.minimum)
prod = _reduction('prod', np.multiply)
mean = _reduction('mean', np.add, mean=True)
all = _reduction('all', np.logical_and)


def loop_reduce(x, op, loop_indices, dtype=None, mask=None, **kwargs):
    """Assigned to dst: at the first iteration of all `loop_indices` dst = x, later dst = op(dst, x)."""
    run = begin()
    view = on_chip(operand(x), 'nl.loop_reduce')
    kind = result_kind(dtype, [view])
    window, where = _mask(mask, view.shape)
    result = view.array(window).astype(kind.storage) if run.numerics else None
    pending = issue(run, 'loop_reduce', 'auto', [(view, window)], view.shape, kind, result, window)
    pending.where = where
    pending.combine = alu(op)
    pending.first = all_first(loop_indices)
    pending.accumulating = True
    return pending.tile


def all_first(indices):
    for index in indices:
        if not is_first_iteration(index):
            return False
    return True


# ----- transposes and matmul -----
def transpose(x, dtype=None, mask=None, **kwargs):
    """x.T; unlike nisa.nc_transpose the result may be assigned to SBUF (the compiler adds the copy)."""
    from . import isa
    tile = isa.nc_transpose(x, engine=None)
    tile.pending.psum_only = False
    return tile


def matmul(x, y, transpose_x=False, mask=None, **kwargs):
    """x @ y. Without transpose_x the compiler inserts a PE transpose of x and a PSUM->SBUF copy."""
    from . import isa
    stationary = x
    if not transpose_x:
        view = operand(x)
        if view.shape[0] > 128 or _free(view) > 128:
            raise CompileError(f'nl.matmul: x of shape {view.shape} exceeds the 128x128 stationary tile')
        stationary = copy(isa.pe_transpose(view))
    return isa.nc_matmul(stationary, y, mask=mask)
