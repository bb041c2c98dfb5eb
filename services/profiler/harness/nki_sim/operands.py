"""Helpers shared by the nl and nisa instruction implementations: operand normalisation, broadcasting, masks,
result dtypes and engine names."""
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from .affine import Affine, Predicate, index_as_value, mask_window
from .dtypes import Kind, kind_of, to_storage
from .errors import CompileError
from .runtime import index_values, operand
from .tensors import Tensor
from .views import View

SCALARS = (int, float, bool, np.number)


class Engine:
    """Values of nisa.*_engine; `trace_name` is the trace's eng field."""

    def __init__(self, name, trace_name):
        self.name = name
        self.trace_name = trace_name

    def __repr__(self):
        return f'nisa.{self.name}'


unknown_engine = Engine('unknown_engine', 'auto')
tensor_engine = Engine('tensor_engine', 'pe')
vector_engine = Engine('vector_engine', 'dve')
scalar_engine = Engine('scalar_engine', 'act')
gpsimd_engine = Engine('gpsimd_engine', 'pool')
dma_engine = Engine('dma_engine', 'dma')
sync_engine = Engine('sync_engine', 'sync')     # nisa.engine.sync: triggers DMAs (dma_copy engine=), computes nothing


def engine_name(engine: Any, default: str = 'auto') -> str:
    if engine is None or engine is unknown_engine:
        return default
    if engine is sync_engine:
        raise CompileError('engine=nisa.engine.sync: the Sync engine runs no compute instruction (it only triggers '
                           'DMAs, as the engine= of nisa.dma_copy)')
    if engine is tensor_engine:
        raise CompileError('engine=nisa.tensor_engine: the Tensor Engine runs matmuls and transposes only '
                           '(nisa.nc_matmul, nisa.nc_transpose); this instruction runs on the Vector, Scalar or '
                           'GpSimd Engine')
    if isinstance(engine, Engine):
        return engine.trace_name
    raise CompileError(f'unknown engine {engine!r}')


def is_tile(value: Any) -> bool:
    return isinstance(value, (Tensor, View))


def tile_or_scalar(value: Any) -> Any:
    if isinstance(value, (Tensor, View)):
        return operand(value)
    if isinstance(value, SCALARS):
        return value
    if isinstance(value, Affine):
        return index_values(value)
    why = index_as_value(value)
    if why is not None:
        raise CompileError(why)
    raise CompileError(f'expected a tile or a scalar, got {type(value).__name__}')


def on_chip(view: View, what: str) -> View:
    if not view.tensor.buffer.on_chip:
        raise CompileError(f'{what} operates on SBUF/PSUM tiles; load HBM data with nl.load first')
    return view


def broadcast_shape(views: Sequence[View]) -> Tuple[int, ...]:
    """Partition-first (left-aligned) broadcast of operand shapes."""
    ndim = max(len(v.shape) for v in views)
    shape = [1] * ndim
    for v in views:
        for axis, size in enumerate(v.shape):
            if size != 1:
                if shape[axis] not in (1, size):
                    raise CompileError(f'operand shapes do not broadcast: {[x.shape for x in views]}')
                shape[axis] = size
    return tuple(shape)


def padded(array: np.ndarray, ndim: int) -> np.ndarray:
    """Give a lower-rank operand trailing unit axes so it broadcasts partition-first."""
    if array.ndim < ndim:
        return array.reshape(array.shape + (1,) * (ndim - array.ndim))
    return array


def per_partition(array: np.ndarray, ndim: int) -> np.ndarray:
    """A [P, 1] scalar-per-partition operand shaped to broadcast over an ndim-D tile."""
    return array.reshape((array.shape[0],) + (1,) * (ndim - 1))


def _masks_nothing_off(predicate: Any) -> bool:
    """No mask, or a plain true one."""
    return predicate is None or predicate is True or isinstance(predicate, np.bool_) and bool(predicate)


def mask(predicate: Any, shape: Sequence[int]) -> Tuple[Any, Optional[np.ndarray]]:
    if _masks_nothing_off(predicate):
        return None, None
    if predicate is False or isinstance(predicate, np.bool_):
        return tuple((0, 0) for _ in shape), None     # a plain False mask: the instruction touches nothing
    return mask_window(predicate, shape)


def unapplied_mask(name: str, predicate: Any) -> None:
    """`mask=` on an instruction whose mask the simulator does not apply: accepted when it masks nothing off (a
    predicate true at every index, as a boundary mask is on a tile the shapes fill), otherwise refused, never
    silently ignored (the instruction would otherwise compute and write every element)."""
    if _masks_nothing_off(predicate) or isinstance(predicate, Predicate) and predicate.holds_everywhere():
        return
    raise CompileError(f'{name}: mask= is not modelled by the simulator for this instruction (it would be '
                       'ignored); compute the full tile and select or store the masked part')


# How much of a float32 value a float format keeps: a result without dtype= takes its most precise float operand's
_FLOAT_PRECISION = {'float64': 5, 'float32': 4, 'tfloat32': 3, 'float16': 2, 'bfloat16': 2, 'float8_e4m3': 1,
                    'float8_e4m3fn': 1, 'float8_e5m2': 1}


def result_kind(dtype: Any, views: Sequence[View]) -> Kind:
    """The format of an instruction's result: `dtype`, else that of "data1 or data2, whichever has the higher
    precision" (the tensor_tensor page; the nl arithmetic pages alike): a float operand's over an integer one, the
    most precise float format, and float32 for two different formats of the same precision (float16 with
    bfloat16). Integer operands alone: the first one's."""
    if dtype is not None:
        return kind_of(dtype)
    best = None
    tied = False
    for v in views:
        kind = v.tensor.kind
        if kind.storage.kind != 'f' or kind is best:
            continue
        if best is None or _precision(kind) > _precision(best):
            best, tied = kind, False
        elif _precision(kind) == _precision(best) and _format_name(kind) != _format_name(best):
            tied = True
    if best is None:
        return views[0].tensor.kind
    return kind_of(np.float32) if tied else best


def _format_name(kind: Kind) -> str:
    return str(getattr(kind.public, 'name', kind.public))


def _precision(kind: Kind) -> int:
    return _FLOAT_PRECISION.get(_format_name(kind), 4)


def window_shape(window: Any, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    return shape if window is None else tuple(hi - lo for lo, hi in window)


def partition_rows(x: np.ndarray) -> np.ndarray:
    """A tile's values as [partitions, free elements]. Also for the empty window of a mask that keeps nothing
    (`mask=False`: zero partitions), where numpy cannot infer a -1 extent."""
    return x.reshape(x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64)))


def fit(result: Any, kind: Kind, shape: Sequence[int]) -> np.ndarray:
    """Cast a computed result to the output storage dtype and full (windowed) shape."""
    result = np.asarray(result)
    if result.dtype != kind.storage:
        result = to_storage(result, kind.storage)
    if result.shape != shape:
        result = np.broadcast_to(result, shape).copy() if result.size != np.prod(shape) else result.reshape(shape)
    return result
