"""neuronxcc.nki.isa (nisa): the engine instructions, over numpy.

Each function validates the hardware limits the compiler enforces, computes its result (numerics mode) and
issues one trace instruction. Engine fields: instructions bound to one engine by the ISA name it (nc_matmul: pe,
activation: act, iota/affine_select: pool, bn_stats/bn_aggr/scan: dve); the others report `auto` unless the kernel
passed an explicit engine=.
"""
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from . import memory, target
from .affine import Affine, Predicate
from .compute import assign as copy_into
from .compute import alu_name, copy, deterministic_dropout, elementwise, fold_positions, free_elements, reduce
from .call_forms import CALL_DESTINATION, check_module
from .dtypes import kind_of, write_in_format
from .errors import CompileError, missing_api
from .indirect import DynamicRunsView, DynamicView, IndirectView
from . import isa_select
from .isa_select import (  # noqa: F401  (re-exported as nisa.*)
    core_barrier, dma_transpose, local_gather, max8, nc_find_index8, nc_match_replace8, nc_n_gather, nc_stream_shuffle,
    nonzero_with_count, sequence_bounds, tensor_copy_predicated)
from . import isa_topk
from .isa_topk import topk  # noqa: F401  (re-exported as nisa.topk)
from .operands import (  # noqa: F401  (the *_engine values are re-exported as nisa.*)
    SCALARS, dma_engine, engine_name, fit, gpsimd_engine, is_tile, on_chip, per_partition, result_kind,
    scalar_engine, tensor_engine, unapplied_mask, unknown_engine, vector_engine, window_shape)
from .operands import sync_engine as _sync_engine
from .operands import mask as mask_of
from .operands import partition_rows
from .ops import activation as activation_function
from .ops import ABS_MAX, ABS_MIN, ARITHMETIC_ALU, BITVEC_ALU, BYPASS, UNARY_ALU_FNS, alu, float32_operands
from .runtime import Pending, begin, current, direct, dynamic_refusal, issue, operand, operand_reads
from .runtime import issue_iota
from .target import require_generation
from .tensors import Tensor
from .views import View, destination, same_kind


STATIONARY_FREE_LIMIT = 128
MOVING_FREE_LIMIT = 512
PARTITION_LIMIT = 128
BN_STATS_FREE_LIMIT = 512
FP32 = kind_of(np.float32)



class NkiValidationError(Exception):
    """`nisa.NkiValidationError` (the NKI 0.3+ nki.isa stub: "Raised when hardware constraints are violated"), so that
    a kernel may name it (`except nisa.NkiValidationError:`). The simulator never raises it: a violated constraint is
    the run's COMPILE_ERROR, which names the constraint."""

class reduce_cmd:
    idle = 'idle'
    reset = 'reset'
    reduce = 'reduce'
    reset_reduce = 'reset_reduce'
    load_reduce = 'load_reduce'


_CMD = reduce_cmd       # inside functions whose reduce_cmd parameter hides the class


class nc_version:
    """The NeuronCore generations of the nki.isa.nc_version page: gen2 (Trn1/Inf2), gen3 (Trn2), gen4 (Trn3). The
    simulated devices are gen2 or gen3; a kernel comparing against gen4 takes its pre-Trn3 path."""
    gen2 = 2
    gen3 = 3
    gen4 = 4


def get_nc_version() -> Any:
    """The NeuronCore generation of the simulated device (nki_sim.target: gen2 for trn1, gen3 for trn2)."""
    return target.nc_version()


# ----- PE -----
class matmul_perf_mode:
    """nc_matmul perf_mode values: the double-row modes contract [K, 2, M] by [K, 2, N] operands (2K rows) at
    the cost of K."""
    none = 'none'
    double_row = 'double_row'
    double_row_gen3 = 'double_row_gen3'
    double_row_sw_interleave = 'double_row_sw_interleave'


def nc_matmul(stationary: Any, moving: Any, is_stationary_onezero: Any = False, is_moving_onezero: Any = False,
              is_transpose: Any = False, perf_mode: Any = None, tile_position: Any = (), tile_size: Any = (),
              mask: Any = None, **kwargs: Any) -> Any:
    """PSUM[M, N] = stationary[K, M].T @ moving[K, N]; is_transpose=True with an identity moving is a PE transpose.
    A double-row perf_mode takes [K, 2, M] and [K, 2, N] operands and contracts all 2K rows. tile_position /
    tile_size place the matmul on a row/column tile of the PE array (checked; the product is the same)."""
    pe_tile = _pe_tile(tile_position, tile_size)
    stationary = _evicted(stationary)
    moving = _evicted(moving)
    run = begin()
    stat = _sbuf_operand(operand(stationary), 'nc_matmul stationary')
    mov = _sbuf_operand(operand(moving), 'nc_matmul moving')
    k = stat.shape[0]
    m = stat.free_size
    n = mov.free_size
    double = perf_mode is not None and 'double_row' in str(perf_mode)
    if perf_mode is not None and str(perf_mode) != 'none' and not double:
        raise CompileError(f'nc_matmul: perf_mode {perf_mode!r} is not supported by the simulator (none and the '
                           'double-row modes are)')
    if double:
        if len(stat.shape) != 3 or len(mov.shape) != 3 or stat.shape[1] != 2 or mov.shape[1] != 2:
            raise CompileError(f'nc_matmul {perf_mode}: operands are [K, 2, M] and [K, 2, N], got {stat.shape} and '
                               f'{mov.shape}')
        # nc_matmul page: "Tensor Engine supports FP8 double performance mode"; with float32 operands it contracted
        # 2K rows in the time of K
        formats = {getattr(v.tensor.kind.public, 'name', str(v.tensor.kind.public)) for v in (stat, mov)}
        if not formats <= _FP8_FORMATS:
            raise CompileError(f'nc_matmul {perf_mode}: the double-row mode is an FP8 mode; the operands are '
                               f'{" and ".join(sorted(formats))}')
        m, n = stat.shape[2], mov.shape[2]
    if pe_tile is not None:
        _stationary_fits_pe_tile(pe_tile, k, m, perf_mode if double else None)
    if not is_transpose:
        for role, view in (('stationary', stat), ('moving', mov)):
            if view.tensor.kind.storage.kind in 'iub':
                raise CompileError(f'nc_matmul: the {role} is {view.tensor.kind.storage.name}; the Tensor Engine '
                                   'multiplies float8_e4m3, float8_e5m2, bfloat16, float16, tfloat32 and float32 '
                                   'operands (nki.isa.nc_matmul page): convert it first '
                                   '(nl.copy(t, dtype=nl.bfloat16))')
    if k != mov.shape[0]:
        raise CompileError(f'nc_matmul: stationary and moving have different partition sizes ({k} vs {mov.shape[0]})')
    if k > PARTITION_LIMIT:
        raise CompileError(f'nc_matmul: contraction (partition) size {k} exceeds {PARTITION_LIMIT}')
    if m > STATIONARY_FREE_LIMIT:
        raise CompileError(f'nc_matmul: stationary free size {m} exceeds {STATIONARY_FREE_LIMIT}')
    if n > MOVING_FREE_LIMIT:
        raise CompileError(f'nc_matmul: moving free size {n} exceeds {MOVING_FREE_LIMIT}')
    shape = (m, n)
    window, where = mask_of(mask, shape)
    result = None
    if run.numerics:
        if double:      # rows (k, half) of both operands form one contraction of 2K rows
            s = np.ascontiguousarray(stat.array().transpose(1, 0, 2)).reshape(2 * k, m)
            v = np.ascontiguousarray(mov.array().transpose(1, 0, 2)).reshape(2 * k, n)
        else:
            s = stat.array().reshape(k, m)
            v = mov.array().reshape(k, n)
        if window is not None:
            s = s[:, window[0][0]:window[0][1]]
            v = v[:, window[1][0]:window[1][1]]
        if is_transpose and _is_identity(run, mov, v, None if window is None else window[1], double):
            result = np.ascontiguousarray(s.T, dtype=np.float32)
        else:
            # a moving operand that is not an identity makes a product: it is timed as one (timed as a transpose,
            # a full matmul cost a third of its PE time), and only an identity transpose is a transpose's CSE
            is_transpose = False
            result = _contract(s.astype(np.float32, copy=False), v.astype(np.float32, copy=False))
    pending = issue(run, 'transpose' if is_transpose else 'matmul', 'pe', [(stat, None), (mov, None)], shape, FP32,
                    result, window, out_buffer=memory.psum)
    pending.where = where
    pending.p, pending.n, pending.nstat = k, n, m
    pending.psum_only = True
    pending.window_free = True
    if is_transpose:
        pending.cse_key = ('transpose', _value_key(stat), _value_key(mov))
    return pending.tile


def _pe_tile(position: Any, size: Any) -> Optional[Tuple[int, int]]:
    """nc_matmul's PE tiling fields (NKI 2.26+ API page, "Tiling mode"): tile_size (row_size, column_size) and
    tile_position (row, column) offsets in the 128x128 array, both given or both empty. Row tiling runs several
    small matmuls side by side on hardware; the simulator checks the fields and computes the same product (the
    timing model does not overlap tiled matmuls). Returns tile_size, or None without tiling."""
    given = [v for v in (position, size) if v is not None and tuple(v) != ()]
    if not given:
        return None
    if len(given) == 1:
        # the compiler's own check: "nc_matmul tile_position and tile_size must be both set or not set."
        raise CompileError(f'nc_matmul: tile_position {position!r} and tile_size {size!r} must be both set or '
                           'not set (tile_size (row_size, column_size) places the matmul at tile_position '
                           '(row, column) of the 128x128 PE array)')
    try:
        pos = tuple(int(v) for v in position)
        extent = tuple(int(v) for v in size)
    except (TypeError, ValueError):
        raise CompileError(f'nc_matmul: tile_position {position!r} and tile_size {size!r} are pairs of integers, '
                           'given together') from None
    if len(pos) != 2 or len(extent) != 2 or any(e not in (32, 64, 128) for e in extent) or \
            any(p < 0 or p % e or p + e > PARTITION_LIMIT for p, e in zip(pos, extent)):
        raise CompileError(f'nc_matmul: tile_size {size!r} is (row_size, column_size) of 32, 64 or 128 and '
                           f'tile_position {position!r} a multiple of it inside the 128x128 PE array')
    return (extent[0], extent[1])


def _stationary_fits_pe_tile(extent: Tuple[int, int], rows: int, columns: int, double_row: Any) -> None:
    """The nc_matmul page's limits on a tiled matmul: the stationary's partitions (contraction rows) occupy PE rows
    and its free size PE columns, "The stationary tile size must not exceed the chosen tile_size", and "double_row
    performance mode cannot be combined with Tensor Engine column tiling mode"."""
    row_size, column_size = extent
    if double_row is not None and column_size < PARTITION_LIMIT:
        raise CompileError(f'nc_matmul: perf_mode {double_row} with tile_size {extent} (column tiling): "double_row '
                           'performance mode cannot be combined with Tensor Engine column tiling mode" (nki.isa.'
                           'nc_matmul page); use column_size 128')
    if rows > row_size or columns > column_size:
        raise CompileError(f'nc_matmul: the stationary ({rows} partitions, {columns} columns) does not fit tile_size '
                           f'{extent} (row_size {row_size} PE rows for its partitions, column_size {column_size} PE '
                           'columns for its free size): "The stationary tile size must not exceed the chosen '
                           'tile_size" (nki.isa.nc_matmul page, Tiling mode)')


def _contract(stationary, moving):
    """stationary.T @ moving in fp32, with the faster of np.matmul and numpy's own einsum loop on this machine
    (einsum wins ~4x where numpy links the reference netlib BLAS; matmul wins with an optimised BLAS)."""
    global _CONTRACTION
    if _CONTRACTION is None:
        _CONTRACTION = _fastest_contraction()
    return _CONTRACTION(stationary, moving)


def _matmul_contraction(stationary, moving):
    return np.matmul(stationary.T, moving)


def _einsum_contraction(stationary, moving):
    return np.einsum('km,kn->mn', stationary, moving)


def _fastest_contraction():
    stationary = np.ones((128, 128), np.float32)
    moving = np.ones((128, 512), np.float32)
    timings = []
    for candidate in (_matmul_contraction, _einsum_contraction):
        best = float('inf')
        for _ in range(3):
            began = time.perf_counter()
            candidate(stationary, moving)
            best = min(best, time.perf_counter() - began)
        timings.append((best, candidate))
    return min(timings, key=lambda t: t[0])[1]


_CONTRACTION = None


def _identity_key(view):
    alloc = view.alloc
    return alloc.serial, alloc.version, view.offset, view.shape, view.strides


def _value_key(view):
    """What a view holds, for CSE: a part of a tile loaded from HBM is named by the load's source (two tiles
    loaded from the same unchanged region hold the same value, in whichever buffers), anything else by its
    allocation and version."""
    alloc = view.alloc
    origin = alloc.origin
    if origin is not None and origin[2] == alloc.version and view.tensor.source is None:
        p0, p1, f0, f1, _ = view.region(None, alloc.free)
        r = origin[1]
        if r[0] <= p0 and p1 <= r[1] and r[2] <= f0 and f1 <= r[3]:      # only what the load wrote
            return origin[0], origin[1], origin[3], view.offset, view.shape, view.strides
    return _identity_key(view)


_FP8_FORMATS = frozenset({'float8_e4m3', 'float8_e5m2', 'float8_e4m3fn', 'float8_e5m2fnuz', 'float8_e4m3fnuz'})


def _is_identity(run, view, array, columns=None, double=False):
    """Is `array`, the moving operand `view` as the matmul reads it (its mask's `columns` window, the double-row
    layout), an identity matrix? Kept per view, window and layout: another window of the same tile may hold
    anything (a tile with I in columns 0:64 and 2*I in 64:128 read as I by its second half's matmul was a
    transpose where the device multiplies by 2*I)."""
    cache = run.identity_cache
    key = (_identity_key(view), None if columns is None else tuple(columns), double)
    known = cache.get(key)
    if known is None:
        known = cache[key] = array.shape[0] == array.shape[1] and np.array_equal(array, np.eye(array.shape[0]))
    return known


def _sbuf_operand(view, what):
    if view.tensor.buffer is not memory.sbuf:
        hint = ''
        if view.tensor.buffer is memory.psum:
            hint = ('; copy it to SBUF first (nl.copy / nisa.tensor_copy); in the Beta 2 form the destination is '
                    'the first argument or dst=, and needs `import nki` for the positional form')
        raise CompileError(f'{what} must be in SBUF (it is in {view.tensor.buffer.name}){hint}')
    return view


def _evicted(value):
    """An instruction's PSUM result that no kernel tensor holds (an unassigned transpose or matmul, still pending
    or flushed to an anonymous PSUM tile) feeding a matmul: the compiler copies it to SBUF, as it does for
    nl.transpose. A PSUM tensor the kernel declared is its own business (a matmul operand must be in SBUF)."""
    if not isinstance(value, Tensor) or not value.produced or value.alias is not None:
        return value
    pending = value.pending
    if pending is not None and pending.op == 'transpose' and pending.eng == 'pe' or \
            pending is None and value.buffer is memory.psum:
        return copy(value)
    return value


def pe_transpose(view: Any, mask: Any = None) -> Any:
    """Transpose a [P, F] tile on the PE array (F, P <= 128) into PSUM; `mask` is over the [F, P] result (the
    elements it masks off are not written)."""
    run = begin()
    view = on_chip(view, 'a transpose')
    if len(view.shape) != 2:
        raise CompileError(f'transpose needs a 2-D tile, got shape {view.shape}')
    p, f = view.shape
    if p > PARTITION_LIMIT or f > PARTITION_LIMIT:
        raise CompileError(f'PE transpose of a [{p}, {f}] tile: both dimensions must be <= {PARTITION_LIMIT}')
    window, where = mask_of(mask, (f, p))
    pending = issue(run, 'transpose', 'pe', [(view, None)], (f, p), view.tensor.kind,
                    _transposed(view, window) if run.numerics else None, window, out_buffer=memory.psum)
    pending.where = where
    pending.p, pending.n, pending.nstat = p, p, f
    pending.psum_only = True
    if window is None and where is None:
        pending.cse_key = ('transpose', _value_key(view))     # a repeated transpose of the same data: CSE
    return pending.tile


def _transposed(view: Any, window: Any) -> np.ndarray:
    """view.T, cut to the mask's window of the result when there is one."""
    result = view.array().T
    if window is not None:
        result = result[window[0][0]:window[0][1], window[1][0]:window[1][1]]
    return np.ascontiguousarray(result)


def nc_transpose(data: Any, engine: Any = None, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """data.T on the PE array (result in PSUM; assigned to SBUF the compiler adds the copy) or, for tiles of at
    most 32x32 or engine=vector_engine, on the vector engine. A dtype other than data's adds a cast (a copy
    instruction), as the Beta 1 API page says."""
    view = operand(data)
    if engine is vector_engine or engine is None and view.shape[0] <= 32 and view.free_size <= 32:
        return _cast_result(_vector_transpose(view, mask), dtype)
    tile = pe_transpose(view, mask)
    tile.pending.psum_only = False
    return _cast_result(tile, dtype)


def _cast_result(tile: Any, dtype: Any) -> Any:
    """The tile converted to dtype by one more copy instruction, or the tile itself when dtype is None or its own."""
    if dtype is None or kind_of(dtype) == tile.kind:
        return tile
    return copy(tile, dtype=dtype)


def _vector_transpose(view, mask=None):
    """data.T on the vector engine. The nc_transpose pages give it tiles of at most 32x32; a Beta 1 kernel that asks
    for engine=vector on a larger tile (up to 128x128) is transposed whole, as neuronx-cc's Beta 1 front end does on
    trn2 (an agent's [128, 128] fp32 probe compiled, verified and kept the Vector Engine busy, round 50a); Beta 2
    keeps the 32x32 limit (its simulator refuses [64, 128], round 36)."""
    run = begin()
    if len(view.shape) != 2:
        raise CompileError(f'a vector-engine transpose needs a 2-D tile, got shape {view.shape}')
    if view.shape[0] > 32 or view.shape[1] > 32:
        if run.beta2:
            raise CompileError('a vector-engine transpose handles tiles of at most 32x32')
        if view.shape[0] > PARTITION_LIMIT or view.shape[1] > PARTITION_LIMIT:
            raise CompileError(f'a vector-engine transpose of a [{view.shape[0]}, {view.shape[1]}] tile: both '
                               f'dimensions must be <= {PARTITION_LIMIT} (the result puts the free axis on partitions)')
    window, where = mask_of(mask, view.shape[::-1])
    pending = issue(run, 'transpose', 'dve', [(view, None)], view.shape[::-1], view.tensor.kind,
                    _transposed(view, window) if run.numerics else None, window)
    pending.where = where
    return pending.tile


# ----- ACT -----
def activation(op: Any, data: Any, bias: Any = None, scale: Any = 1.0, reduce_op: Any = None, reduce_res: Any = None,
               reduce_cmd: Any = None, dtype: Any = None,
               mask: Any = None, **kwargs: Any) -> Any:
    """op(data * scale + bias); scale is a float or a [P, 1] tile, bias a [P, 1] tile; optional free-axis
    reduction of the output into reduce_res."""
    fn = activation_function(op)
    if reduce_op is not None:
        _checked_reduce_op('activation', reduce_op, (np.add,), 'the activation page: "reduce_op must be nl.add: '
                           'the Scalar Engine reduction registers can only sum the activated data"; activation_reduce '
                           '(Trn1): "the reduce_op can only be an addition"')
    return _scale_bias_op('activation', 'act', lambda x: fn(x), data, bias, scale, dtype, mask, reduce_res,
                          reduce_cmd)


def _checked_reduce_op(instruction: str, reduce_op: Any, allowed: Any, rule: str) -> None:
    """A reduce_op the instruction's page lists; any other is a COMPILE_ERROR quoting `rule`."""
    if alu(reduce_op) not in allowed:
        name = getattr(reduce_op, '__name__', repr(reduce_op))
        raise CompileError(f'{instruction}: reduce_op {name} is not supported here ({rule})')


def activation_reduce(op: Any, data: Any, reduce_op: Any, reduce_res: Any, bias: Any = None, scale: Any = 1.0,
                      dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    return activation(op=op, data=data, bias=bias, scale=scale, reduce_op=reduce_op, reduce_res=reduce_res,
                      reduce_cmd=reduce_cmd.reset_reduce, dtype=dtype, mask=mask)


_ACTIVATE2_STAGES = (('multiply', 'add'), ('multiply', 'subtract'), ('multiply', None), ('add', None),
                     ('subtract', None), (None, None))      # (op0, op1) pairs of the API page; None = nl.bypass


def activate2(op: Any, data: Any, imm0: Any, imm1: Any, op0: Any, op1: Any, relu_param: Any = 0.0,
              reverse0: Any = False, reverse1: Any = False, reduce_op: Any = None, reduce_res: Any = None,
              reduce_cmd: Any = reduce_cmd.idle, engine: Any = scalar_engine, **kwargs: Any) -> Any:
    """NKI 2.31+ (NeuronCore-v4): op((data op0 imm0) op1 imm1) per partition (imm0/imm1 scalars or [P, 1] tiles;
    nl.bypass skips a stage; reverse0/1 swap an operator's inputs), then an optional free-axis reduction into the
    scalar engine's registers: reset (registers to reduce_op's identity), reduce (on top of them), reset_reduce
    (identity, then this result), idle (unchanged); reduce_res reads the registers out. reduce_op is nl.add,
    nl.maximum, nl.minimum, nl.abs_max or nl.abs_min."""
    require_generation('nisa.activate2', 4, 'its page: "Available only on NeuronCore-v4 and newer"')
    fn = activation_function(op)
    stages = (_stage_name(op0, 'op0'), _stage_name(op1, 'op1'))
    if stages not in _ACTIVATE2_STAGES:
        shown = ', '.join(f'({a or "bypass"}, {b or "bypass"})' for a, b in _ACTIVATE2_STAGES)
        raise CompileError(f'activate2: (op0, op1) = ({stages[0] or "bypass"}, {stages[1] or "bypass"}) is not one '
                           f'of the pairs the instruction supports: {shown}')
    if reverse0 and stages[0] is None or reverse1 and stages[1] is None:
        raise CompileError('activate2: reverse0/reverse1 need op0/op1 to be set (not nl.bypass)')
    if not (isinstance(relu_param, SCALARS) and not isinstance(relu_param, bool) and float(relu_param) == 0.0):
        raise CompileError('activate2: relu_param (the parameter of parameterized activation functions such as '
                           'PReLU) is not modelled: the simulator has no parameterized activation function')
    eng = engine_name(engine, 'act')
    if eng not in ('act', 'pool'):
        raise CompileError(f'activate2 runs on the scalar engine (or GpSimd on NeuronCore-v4), not {eng}')
    reducing = reduce_res is not None or reduce_cmd not in (None, _CMD.idle)
    if reducing and eng != 'act':
        raise CompileError('activate2: the reduction registers are on the scalar engine only')
    folds = {np.add: 0.0, np.maximum: -np.inf, np.minimum: np.inf, ABS_MAX: 0.0, ABS_MIN: np.inf}
    fold: Any = None
    if reducing:
        if reduce_op is None:
            raise CompileError('activate2: reduce_res / reduce_cmd need reduce_op (nl.add, nl.maximum, nl.minimum, '
                               'nl.abs_max or nl.abs_min)')
        fold = alu(reduce_op)
        if fold not in folds:
            raise CompileError(f'activate2: reduce_op {getattr(reduce_op, "__name__", reduce_op)!r} is not one of '
                               'nl.add, nl.maximum, nl.minimum, nl.abs_max, nl.abs_min')
        if reduce_cmd not in (None, _CMD.idle, _CMD.reset, _CMD.reduce, _CMD.reset_reduce):
            raise CompileError(f'activate2: reduce_cmd {reduce_cmd!r} is not idle, reset, reduce or reset_reduce')
    elif reduce_op is not None:
        raise CompileError('activate2: reduce_op without reduce_cmd or reduce_res would be ignored')
    first = None if stages[0] is None else alu(op0)
    second = None if stages[1] is None else alu(op1)

    def compute(x, a, b):
        if first is not None:
            x = first(a, x) if reverse0 else first(x, a)
        if second is not None:
            x = second(b, x) if reverse1 else second(x, b)
        return fn(x)
    view = on_chip(operand(data), 'activate2')
    tile = _with_scalars('activation', eng, compute, view, (None if first is None else imm0,
                                                            None if second is None else imm1), None, None,
                         names=('activate2: imm0', 'activate2: imm1'))
    if not reducing:
        return tile
    pending = tile.pending
    run = current()
    target = destination(operand(reduce_res)) if reduce_res is not None else None
    if run.numerics:
        rows = pending.result.shape[0]
        register = run.accumulator
        if register is None or np.shape(register) != (rows,) or reduce_cmd in (_CMD.reset,
                                                                                 _CMD.reset_reduce):
            register = np.full(rows, folds[fold], dtype=np.float32)
        if reduce_cmd in (_CMD.reduce, _CMD.reset_reduce):
            # the engine's accumulation register is float32
            register = fold(register, fold.reduce(partition_rows(pending.result).astype(np.float32),
                                                  axis=1)).astype(np.float32)
        if reduce_cmd not in (None, _CMD.idle):
            run.accumulator = register
        if target is not None:
            out = target.array()
            if out.size != rows:
                raise CompileError(f'reduce_res must hold one value per partition ([{rows}, 1]), got {out.shape}')
            write_in_format(out, np.asarray(register).reshape(out.shape), target.tensor.kind)
    elif target is not None and target.free_size != 1:
        raise CompileError(f'reduce_res must hold one value per partition, got {target.shape}')
    if target is not None:
        pending.extra_writes = [(target, None)]
    return tile


def _stage_name(op: Any, field: str) -> Any:
    """activate2's op0/op1 as 'multiply' / 'add' / 'subtract', or None for nl.bypass (or None)."""
    if op is None or getattr(op, 'alu', None) is BYPASS:
        return None
    fn = alu(op)
    for name, ufunc in (('multiply', np.multiply), ('add', np.add), ('subtract', np.subtract)):
        if fn is ufunc:
            return name
    return getattr(fn, '__name__', repr(op))


def _scale_bias_op(op, eng, fn, data, bias, scale, dtype, mask_predicate, reduce_res, command):
    """One ScalarE instruction fn(data * scale + bias); its registers sum the result (the only reduce_op the
    activation pages allow) when reduce_res or reduce_cmd asks."""
    run = begin()
    view = on_chip(operand(data), op)
    _vector_operands(op, view, (('scale', scale), ('bias', bias)))
    shape = view.shape
    kind = result_kind(dtype, [view])
    window, where = mask_of(mask_predicate, shape)
    tiles = [view]
    consts = 0
    for extra in (scale, bias):
        if is_tile(extra):
            tiles.append(operand(extra))
        elif extra is not None:
            consts += 1
    reads = operand_reads(tiles, window, shape)
    result = None
    reduce_target = None
    if reduce_res is not None:
        reduce_target = destination(operand(reduce_res))
    # the registers reduce whenever reduce_cmd says so ("stored into or reduced on top of ... reduce_regs ...
    # controlled by the reduce_cmd field"); reduce_res only reads them out
    reducing = reduce_target is not None or command not in (None, _CMD.idle)
    if run.numerics:
        ndim = len(shape)
        x = reads[0][0].array(reads[0][1])
        extra_iter = iter(reads[1:])
        factors = []
        for extra in (scale, bias):
            if is_tile(extra):
                v, w = next(extra_iter)
                factors.append(per_partition(v.array(w), ndim))
            else:
                factors.append(extra)
        # ScalarE arithmetic is float32: integer data, scale and bias are converted first (NKI API common fields)
        x, s, b = float32_operands([x] + factors, np.multiply)
        with np.errstate(all='ignore'):
            if s is not None and not (isinstance(s, SCALARS) and s == 1.0):
                x = x * s
            if b is not None:
                x = x + b
            result = fit(fn(x), kind, window_shape(window, shape))
        if reducing:
            _accumulate_register(run, np.add, result, reduce_target, command, window)
    pending = issue(run, op, eng, reads, shape, kind, result, window)
    pending.where = where
    pending.consts = consts
    pending.reduces = reducing
    if reduce_target is not None:
        pending.extra_writes = [(reduce_target, None)]
    return pending.tile


def _accumulate_register(run, reduce_op, result, target, command, window=None, negate=False):
    """The ACT/DVE accumulation registers: reset and/or reduce this instruction's output along free axes. Under a
    mask the result holds only the window's partitions, and only those rows of the target are written. `negate`
    writes the negated value to the target (the registers keep it as it is); a None target updates the registers
    only."""
    ufunc = alu(reduce_op)
    if result.size == 0 and result.shape[0] == 0:
        # a mask that keeps no partition (`mask=False`): the instruction computes nothing; registers and target keep
        # their values
        return
    # the registers are float32: an integer result is accumulated as float32 values
    partial = ufunc.reduce(partition_rows(result).astype(np.float32, copy=False), axis=1)
    register = run.accumulator
    if command == reduce_cmd.reduce and register is not None and register.shape == partial.shape:
        partial = ufunc(register, partial)
    if command != reduce_cmd.idle:
        run.accumulator = partial
    if target is None:
        return
    if negate:
        partial = -partial
    out = target.array()
    if window is not None and out.ndim and out.shape[0] > partial.shape[0] == window[0][1] - window[0][0]:
        out = out[window[0][0]:window[0][1]]
    if out.size != partial.size:
        raise CompileError(f'reduce_res must hold one value per partition ([{partial.size}, 1]), got {out.shape}')
    write_in_format(out, partial.reshape(out.shape), target.tensor.kind)     # the 32-bit registers, in its format


# ----- DVE / Pool -----
def tensor_scalar(data: Any, op0: Any, operand0: Any, reverse0: Any = False, op1: Any = None, operand1: Any = None,
                  reverse1: Any = False, dtype: Any = None,
                  mask: Any = None, engine: Any = unknown_engine, **kwargs: Any) -> Any:
    """(data op0 operand0) op1 operand1; operands are scalars or [P, 1] tiles; reverse swaps the operand order."""
    first = alu(op0, operand0)
    second = alu(op1, operand1) if op1 is not None else None
    for name, fn, reverse in (('op0', first, reverse0), ('op1', second, reverse1)):
        if reverse and fn in UNARY_ALU_FNS:
            raise CompileError(f'tensor_scalar: {name} is a one-input operator (abs, rsqrt or reciprocal: it reads the '
                               f'data, its operand is 0); reverse{name[-1]}=True would apply it to the operand, which '
                               'no NKI page defines')
    _float32_tile_operands((first,) if second is None else (first, second), operand0, operand1)
    eng = _tensor_scalar_engine(first, second, engine_name(engine))

    def compute(x, a, b):
        y = first(a, x) if reverse0 else first(x, a)
        if second is not None:
            y = second(b, y) if reverse1 else second(y, b)
        return y
    return _with_scalars('tensor_scalar', eng, compute, data, (operand0, operand1), dtype, mask,
                         alu_ops=(first,) if second is None else (first, second))


def _tensor_scalar_engine(first: Any, second: Any, eng: str) -> str:
    """The engine of a tensor_scalar: "The two operators, op0 and op1, in a tensor_scalar instruction must be of the
    same type (both bitvec or both arithmetic). If bitvec operators are used, the tensor_scalar instruction must run
    on Vector Engine" (nki.isa.tensor_scalar page)."""
    if second is not None and (first in BITVEC_ALU) != (second in BITVEC_ALU) \
            and ARITHMETIC_ALU.intersection((first, second)):
        bitvec, arithmetic = (first, second) if first in BITVEC_ALU else (second, first)
        raise CompileError(f'tensor_scalar: {alu_name(arithmetic)} is an arithmetic operator and {alu_name(bitvec)} '
                           'a bitvec one; the two operators of a tensor_scalar must be of the same type (both bitvec '
                           'or both arithmetic, nki.isa.tensor_scalar page): use two instructions')
    if first in BITVEC_ALU or second in BITVEC_ALU:
        if eng not in ('auto', 'dve'):
            raise CompileError(f'tensor_scalar: with a bitvec operator the instruction must run on the Vector Engine '
                               f'(nki.isa.tensor_scalar page), not on {_ENGINE_NAMES.get(eng, eng)}')
        return 'dve'
    return eng


_ENGINE_NAMES = {'act': 'the Scalar Engine', 'pool': 'the GpSimd Engine', 'pe': 'the Tensor Engine',
                 'dve': 'the Vector Engine'}


def _vector_or_gpsimd(instruction: str, eng: str) -> str:
    """The engine of an instruction the API pages run on the Vector (or GpSimd) Engine only (tensor_tensor: "using
    Vector Engine or GpSimd Engine"; scalar_tensor_tensor: "using Vector Engine")."""
    if eng in ('act', 'pe'):
        raise CompileError(f'{instruction} runs on the Vector or GpSimd Engine (nki.isa.{instruction} page), not on '
                           f'{_ENGINE_NAMES[eng]}')
    return eng


def _float32_tile_operands(fns: Any, *operands: Any) -> None:
    """nisa.tensor_scalar: "arithmetic operators impose no restriction on the data types of input tensor data and
    output tensor dst, but the operand0 and operand1 (if used) must be float32" (the API page's docstring). The
    Beta 2 compiler checks it for tile operands ("'nisa.tensor_scalar_arith' op 'operand0' must be float32, got
    'i32'", vllm-neuron's causal_fill), so a kernel written against `nki` that passes another dtype is refused.
    Bitvec operators take integer operands; Beta 1 kernels keep the conversion to float32."""
    if not current().beta2:
        return
    if any(fn not in ARITHMETIC_ALU for fn in fns):
        return
    for name, value in zip(('operand0', 'operand1'), operands):
        if is_tile(value):
            public = operand(value).tensor.kind.public
            if not (isinstance(public, np.dtype) and public == np.float32):
                raise CompileError(
                    f'tensor_scalar: {name} is a {getattr(public, "name", public)} tile; with arithmetic operators '
                    'the operand0 and operand1 tiles must be float32 (copy it to a float32 tile first, e.g. with '
                    'nisa.tensor_copy)')


def tensor_scalar_reduce(data: Any, op0: Any, operand0: Any, reduce_op: Any, reduce_res: Any, reverse0: Any = False,
                         reduce_cmd: Any = None, reduce_init: Any = None, reduce_res_negate: Any = False,
                         dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """data op0 operand0, its free-axis reduce_op reduction written to reduce_res. reduce_cmd (NKI 2.31+) drives
    the vector engine's accumulation registers as for the other accumulating instructions: reset_reduce (the
    default, and what idle reads as here), reduce (on top of the registers), load_reduce (on top of reduce_init,
    a scalar or a [P, 1] tile). reduce_res_negate (NKI 2.33) writes the negated registers to reduce_res (the
    registers keep the reduction itself)."""
    if not isinstance(reduce_res_negate, (bool, np.bool_)):
        raise CompileError(f'tensor_scalar_reduce: reduce_res_negate is True or False, not {reduce_res_negate!r}')
    _checked_reduce_op('tensor_scalar_reduce', reduce_op, (np.add, np.subtract, np.multiply, np.maximum, np.minimum),
                       'its page: "The reduce_op can be any of nl.add, nl.subtract, nl.multiply, nl.max or nl.min"')
    tile = tensor_scalar(data=data, op0=op0, operand0=operand0, reverse0=reverse0, dtype=dtype, mask=mask)
    pending = tile.pending
    target = destination(operand(reduce_res))
    run = current()
    command = _load_register(run, pending, reduce_cmd, reduce_init, alu(reduce_op))
    if run.numerics:
        _accumulate_register(run, reduce_op, pending.result, target, command, pending.window,
                             negate=bool(reduce_res_negate))
    pending.extra_writes = [(target, None)]
    return tile


def _load_register(run: Any, pending: Any, command: Any, init: Any, ufunc: Any) -> Any:
    """The register command an accumulating vector-engine instruction runs: load_reduce puts `init` (a scalar or
    a [P, 1] tile, read by the instruction) in the accumulation registers and then reduces on top of them; idle and
    None read as reset_reduce. `init` with any other command is refused (the API pages: unset unless load_reduce)."""
    if command not in (None, reduce_cmd.idle, reduce_cmd.reset, reduce_cmd.reset_reduce, reduce_cmd.reduce,
                       reduce_cmd.load_reduce):
        raise CompileError(f'reduce_cmd {command!r} is not a nisa.reduce_cmd value')
    if command != reduce_cmd.load_reduce:
        if init is not None and not (isinstance(init, SCALARS) and float(init) == 0.0):
            raise CompileError('reduce_init is used with reduce_cmd=nisa.reduce_cmd.load_reduce only')
        return reduce_cmd.reduce if command == reduce_cmd.reduce else reduce_cmd.reset_reduce
    rows = pending.tile.shape[0] if pending.window is None else pending.window[0][1] - pending.window[0][0]
    if is_tile(init):
        view = operand(init)
        if view.free_size != 1 or view.shape[0] != pending.tile.shape[0]:
            raise CompileError(f'reduce_init holds one value per partition ([{pending.tile.shape[0]}, 1]), '
                               f'got {view.shape}')
        pending.reads.append((view, None))
        if run.numerics:
            values = view.array().reshape(-1).astype(np.float32)
            run.accumulator = values if pending.window is None else values[pending.window[0][0]:pending.window[0][1]]
    elif run.numerics:
        run.accumulator = np.full(rows, 0.0 if init is None else float(init), dtype=np.float32)
    return reduce_cmd.reduce


_VECTOR_RULES = {
    'activation': 'nki.isa.activation: "When the scale/bias is a vector, it must have the same partition axis size as '
                  'the input data tile and only one element per partition"',
    'scalar_tensor_tensor': 'nki.isa.scalar_tensor_tensor: "The operand0 can be either a compile-time constant '
                            'scalar ... or a tile of shape (data.shape[0], 1)"',
}


def _vector_operands(op: str, data: View, named: Any) -> None:
    """A tile operand that an instruction broadcasts along the free axes (tensor_scalar's operand0 / operand1,
    activation's scale / bias, activate2's imm0 / imm1, scalar_tensor_tensor's operand0) is a vector of shape
    (data.shape[0], 1): one value for each partition of the data. A tile on another number of partitions, a [1, 1]
    tile against many partitions included, is refused, as the compiler's verifier does (public kernels quote
    "'bias' partition total elements 1 != 'dst' partition total elements 128")."""
    for name, value in named:
        if value is None or not is_tile(value):
            continue
        vector = operand(value)
        if vector.shape[0] == data.shape[0] and vector.free_size == 1:
            continue
        rule = _VECTOR_RULES.get(name.split(': ')[0] if ': ' in name else op,
                                 'nki.isa.tensor_scalar: "Both operand0 and operand1 can be SBUF or PSUM tiles of '
                                 'shape (data.shape[0], 1), i.e., vectors, or compile-time constant scalars"')
        said = name if ': ' in name else f'{op}: {name}'
        hint = (f'One value for every partition is a Python scalar, or a tile copied to ({data.shape[0]}, 1) first '
                '(for example with nisa.nc_stream_shuffle)') if vector.free_size == 1 else (
                'Values that change along the free axis are a nisa.tensor_tensor operand with the data\'s shape (a row '
                'copied to every partition first)')
        raise CompileError(f'{said} is a tile of shape {tuple(vector.shape)} against data of shape '
                           f'{tuple(data.shape)}; a tile operand holds one value per partition of the data, shape '
                           f'({data.shape[0]}, 1) ({rule}). {hint}')


def _with_scalars(op, eng, compute, data, scalars, dtype, mask_predicate, alu_ops=(), names=('operand0', 'operand1')):
    run = begin()
    view = on_chip(operand(data), op)
    _vector_operands(op, view, tuple(zip(names, scalars)))
    _psum_free_on_gpsimd(op, eng, (view,))
    shape = view.shape
    kind = result_kind(dtype, [view])
    window, where = mask_of(mask_predicate, shape)
    tiles = [view] + [operand(s) for s in scalars if is_tile(s)]
    reads = operand_reads(tiles, window, shape)
    result = None
    if run.numerics:
        ndim = len(shape)
        x = reads[0][0].array(reads[0][1])
        extra = iter(reads[1:])
        values = []
        for s in scalars:
            if is_tile(s):
                v, w = next(extra)
                values.append(per_partition(v.array(w), ndim))
            else:
                values.append(s)
        x, *values = float32_operands([x] + values, *alu_ops)
        with np.errstate(all='ignore'):
            result = fit(compute(x, *values), kind, window_shape(window, shape))
    pending = issue(run, op, eng, reads, shape, kind, result, window)
    pending.where = where
    pending.consts = sum(1 for s in scalars if s is not None and not is_tile(s))
    return pending.tile


def tensor_tensor(data1: Any, data2: Any, op: Any, dtype: Any = None, mask: Any = None, engine: Any = unknown_engine,
                  **kwargs: Any) -> Any:
    a = operand(data1)
    b = operand(data2)
    if a.tensor.buffer is memory.psum and b.tensor.buffer is memory.psum:
        raise CompileError('tensor_tensor: both inputs are in PSUM; at most one may be')
    eng = _psum_free_on_gpsimd('tensor_tensor', _vector_or_gpsimd('tensor_tensor', engine_name(engine)), (a, b))
    _same_elements_per_partition(a, b)
    fn = alu(op)
    folds = fold_positions(fn, 0, 1)
    native = _native_integer(a, b, fn, eng, dtype)
    if native is not None:
        eng = 'pool'
        exact = fn

        def fn(x: Any, y: Any) -> Any:
            with np.errstate(all='ignore'):
                r = exact(np.asarray(x).astype(np.int64), np.asarray(y).astype(np.int64))
            return r if r.dtype == np.bool_ else r.astype(native)        # wraps modulo 2**32
    # a repeat on unchanged inputs (loop-invariant in the innermost loop) is computed once (cse=1)
    key = ('tensor_tensor', op, eng, _identity_key(a), _identity_key(b))
    tile = elementwise('tensor_tensor', eng, fn, (a, b), dtype, mask, cse_key=key, folds=folds,
                       flat_operands=True, alu_ops=() if native is not None else (fn,))
    if native is not None and tile.pending is not None:
        tile.pending.alu = alu_name(alu(op))       # the trace names the operator as on the float32 path
    return tile


# the arithmetic operators the GpSimd engine computes natively on 32-bit integers in nisa.tensor_tensor (the others
# keep the float32 conversion of the math-operator table)
_NATIVE_INTEGER_ALU = frozenset((np.add, np.subtract, np.multiply, np.maximum, np.minimum, np.equal, np.not_equal,
                                 np.greater, np.greater_equal, np.less, np.less_equal))
_INT32 = (np.dtype(np.int32), np.dtype(np.uint32))


def _native_integer(a: View, b: View, fn: Any, eng: str, dtype: Any) -> Any:
    """The integer dtype of a tensor_tensor the GpSimd engine computes in native integer arithmetic, else None.
    nki.isa.tensor_tensor (NKI 2.31+ pages): "int32/uint32 types: When all input/output tiles are int32 or uint32,
    the operation defaults to GpSimd Engine, which uses native integer arithmetic. This ensures exact results for all
    32-bit integer values. You may override this by passing engine=nki.isa.engine.vector explicitly" and "the
    automatic GpSimd dispatch for int32/uint32 falls back to Vector Engine when any operand resides in PSUM". The
    earlier (Beta 1) pages convert every arithmetic operand to float32, which Beta 1 kernels keep on trn1 unless they
    ask for the GpSimd engine (release notes 2.23: "GpSIMD engine support added to add, multiply in 32bit integer to
    nki.isa tensor operations"). The pages stating the default are the Trn2/Trn3 ones, so on trn2 (NeuronCore-v3)
    the default applies to Beta 1 kernels too."""
    if fn not in _NATIVE_INTEGER_ALU or eng not in ('auto', 'pool') or \
            eng == 'auto' and not (current().integer_gpsimd or target.nc_version() >= 3):
        return None
    call = CALL_DESTINATION[0]
    written = None
    if call is not None and call[0] == 'nisa.tensor_tensor' and isinstance(call[1], (Tensor, View)):
        written = operand(call[1])
    out = written.tensor.kind.storage if written is not None else kind_of(dtype).storage if dtype is not None \
        else a.tensor.kind.storage
    views = [a, b] + ([written] if written is not None else [])
    if out not in _INT32 or any(v.tensor.kind.storage not in _INT32 or v.tensor.buffer is memory.psum for v in views):
        return None
    return out


def _same_elements_per_partition(a: View, b: View) -> None:
    """nisa.tensor_tensor: "The two tiles must have the same partition axis size and the same number of elements
    per partition" (the API page, Beta 1 and Beta 2). The Beta 2 compiler checks it ("'dst' free total elements 64
    != 'rhs' free total elements 1" for a (128, 64) tile and a (128, 1) one), so a kernel written against `nki`
    that relies on broadcasting a [P, 1] operand is refused. Beta 1 kernels keep the partition-first broadcast:
    neuronxcc compiles a (128, 4, 4) tile plus a (128, 1, 1) bias (CS 149 students' conv2d)."""
    if not current().beta2:
        return
    if a.shape[0] != b.shape[0] or free_elements(a) != free_elements(b):
        raise CompileError(
            f'tensor_tensor: data1 {tuple(a.shape)} and data2 {tuple(b.shape)} differ in partition size or in '
            f'elements per partition ({free_elements(a)} and {free_elements(b)}); the two tiles must have the same '
            'partition axis size and the same number of elements per partition (a [P, 1] operand goes to '
            'nisa.tensor_scalar, or is broadcast first with .broadcast_to)')


def scalar_tensor_tensor(data: Any, op0: Any, operand0: Any, op1: Any, operand1: Any, reverse0: Any = False,
                         reverse1: Any = False, reduce_cmd: Any = reduce_cmd.reset_reduce, reduce_op: Any = None,
                         reduce_res: Any = None, dtype: Any = None, mask: Any = None,
                         engine: Any = unknown_engine, **kwargs: Any) -> Any:
    """(data op0 operand0) op1 operand1, with operand0 a scalar or [P, 1] tile and operand1 a tile. NKI 2.33: with
    reduce_op (nl.add, nl.multiply, nl.maximum, nl.minimum) the result is also reduced along its free axes into
    the vector engine's accumulation registers, as tensor_scalar_reduce does (reduce_cmd reset_reduce, the
    default, or reduce; idle reads as reset_reduce), and reduce_res (a [P, 1] tile) receives them."""
    first = alu(op0)
    second = alu(op1)
    if reduce_op is Ellipsis:       # the 2.33 signature's "not set"
        reduce_op = None
    if reduce_op is None and reduce_res is not None:
        raise CompileError('scalar_tensor_tensor: reduce_res needs reduce_op (nl.add, nl.multiply, nl.maximum or '
                           'nl.minimum)')
    if reduce_op is not None:
        if alu(reduce_op) not in (np.add, np.multiply, np.maximum, np.minimum):
            raise CompileError(f'scalar_tensor_tensor: reduce_op {getattr(reduce_op, "__name__", reduce_op)!r} is '
                               'not one of nl.add, nl.multiply, nl.maximum, nl.minimum')
        if reduce_cmd not in (None, _CMD.idle, _CMD.reduce, _CMD.reset_reduce):
            raise CompileError(f'scalar_tensor_tensor: reduce_cmd {reduce_cmd!r} is not reset_reduce, reduce or '
                               'idle (load_reduce needs a reduce_init, which this instruction does not take)')

    _vector_operands('scalar_tensor_tensor', operand(data), (('operand0', operand0),))

    def compute(x, scalar, other):
        y = first(scalar, x) if reverse0 else first(x, scalar)
        return second(other, y) if reverse1 else second(y, other)
    tile = elementwise('tensor_tensor', _vector_or_gpsimd('scalar_tensor_tensor', engine_name(engine)), compute,
                       (data, operand0, operand1), dtype, mask,
                       folds=fold_positions(second, 2) if reduce_op is None else (), alu_ops=(first, second))
    if reduce_op is not None:
        pending = tile.pending
        run = current()
        command = _CMD.reduce if reduce_cmd == _CMD.reduce else _CMD.reset_reduce
        target = destination(operand(reduce_res)) if reduce_res is not None else None
        if run.numerics:
            _accumulate_register(run, reduce_op, pending.result, target, command, pending.window)
        if target is not None:
            pending.extra_writes = [(target, None)]
    return tile


def tensor_reduce(op: Any, data: Any, axis: Any, negate: Any = False, keepdims: Any = False, dtype: Any = None,
                  mask: Any = None, **kwargs: Any) -> Any:
    return reduce(alu(op), data, reduction_axes(axis, len(operand(data).shape)), dtype, mask, keepdims,
                  negate=negate)


def reduction_axes(axis: Any, ndim: int) -> Any:
    """nisa.tensor_reduce's axes. The API pages number the reduction axes two ways: ending at the last dimension
    (axis=(2, 3) of a (P, D1, D2, D3) tile reduces D2 and D3, as numpy does), or, on the earlier pages, counting from
    the most minor axis (axis 1 is the most minor, [1, 2] the two most minor). Consecutive axes from 1 that stop
    short of the last dimension only have a meaning in the second numbering (axis=1 of a (P, A, B) tile reduces B,
    as the NKI Library's cascaded max writes it); any other axes keep numpy's meaning (a public max-pool reduces
    axis=(1, 3) of a 4-D tile)."""
    try:
        axes = sorted({int(a) % ndim for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis)})
    except (TypeError, ValueError):
        raise CompileError(f'tensor_reduce: axis must be an int or a list of ints, not {axis!r}') from None
    if axes and axes[0] == 1 and axes[-1] < ndim - 1 and axes == list(range(1, axes[-1] + 1)):
        return tuple(range(ndim - len(axes), ndim))
    return axis


def tensor_partition_reduce(op: Any, data: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    return reduce(alu(op), data, 0, dtype, mask, keepdims=True)


def reciprocal(data: Any, dtype: Any = None, mask: Any = None, engine: Any = unknown_engine, **kwargs: Any) -> Any:
    return elementwise('reciprocal', engine_name(engine), np.reciprocal, (data,), dtype, mask)


def tensor_copy(src: Any, dtype: Any = None, mask: Any = None, engine: Any = unknown_engine, **kwargs: Any) -> Any:
    """A copy within SBUF/PSUM; a source (or, through dst=, a destination) that is an `.ap(scalar_offset=...)`
    view of an on-chip tensor sits at an offset read from SBUF when the copy runs (NKI 0.4's form of the dynamic
    copies): traced as those are (`dyn=1`, the offset's tile read)."""
    if isinstance(src, DynamicView) and src.pattern:
        return _copy_from_dynamic(src, dtype, mask, engine)
    tile = copy(src, dtype=dtype, mask=mask)
    tile.pending.eng = _psum_free_on_gpsimd('tensor_copy', engine_name(engine), [v for v, _ in tile.pending.reads])
    return tile


def _psum_free_on_gpsimd(instruction: str, eng: str, operands: Any) -> str:
    """`eng`, unless it is GpSimd and an operand is in PSUM: "Since GpSimd cannot access PSUM, src and dst must be in
    SBUF when using GpSimd Engine" (tensor_copy page). A result is placed later (in SBUF unless assigned to PSUM),
    so the operands read are what is checked."""
    if eng == 'pool' and any(view.tensor.buffer is memory.psum for view in operands):
        raise CompileError(f'{instruction}: the GpSimd engine cannot access PSUM; read PSUM with the Vector or '
                           'Scalar Engine')
    return eng


def _copy_to_pattern(target: DynamicView, tile: Any) -> None:
    """nisa.tensor_copy(dst=t.ap(..., scalar_offset=s, indirect_dim=d), src=...): the copy written at the offset."""
    pending = tile.pending if isinstance(tile, Tensor) else None
    if not target.pattern or pending is None or pending is not current().pending:
        raise CompileError(dynamic_refusal(target))
    if pending.dynamic:
        raise CompileError('tensor_copy: the source is a static access (one dynamic side per copy)')
    _mark_dynamic(pending, target, None)
    target.allowed = True
    try:
        copy_into(target, tile)
    finally:
        target.allowed = False


setattr(tensor_copy, 'dynamic_destination', _copy_to_pattern)


def _dynamic(value: Any, what: str, role: str) -> DynamicView:
    if not isinstance(value, DynamicView):
        raise CompileError(f'{what}: the {role} is a tile indexed at a dynamic offset read from SBUF (e.g. '
                           't[:, nl.ds(off[0, 0], n)] or t[i_p, i_f + off[0, 0]], off an integer tile in SBUF); '
                           'for a static access use nisa.tensor_copy')
    return value


def tensor_copy_dynamic_src(src: Any, dtype: Any = None, mask: Any = None, engine: Any = unknown_engine,
                            **kwargs: Any) -> Any:
    """A copy whose source sits at a dynamic offset along a free dimension of an SBUF/PSUM tile (the offset read
    from SBUF when the copy runs); Beta 2's (dst, src) form writes the copy to dst. Traced as a copy that also
    reads the offset's tile (`dyn=1`: the model's minimum initiation interval of a dynamic access), its source
    region every element some offset reaches."""
    return _copy_from_dynamic(_dynamic(src, 'tensor_copy_dynamic_src', 'source'), dtype, mask, engine)


def _copy_from_dynamic(view: DynamicView, dtype: Any, mask: Any, engine: Any) -> Any:
    view.allowed = True
    try:
        tile = copy(view, dtype=dtype, mask=mask)
    finally:
        view.allowed = False
    _mark_dynamic(tile.pending, view, engine)
    return tile


def _mark_dynamic(pending: Any, view: DynamicView, engine: Any) -> None:
    """A copy with a dynamic side: it also reads the offsets' tile and costs as a dynamic access (`dyn=1`); at a
    tile of N offsets it is N copies, one per offset (NKI 2.21's pages: each index element triggers a copy)."""
    if engine is not None:
        pending.eng = engine_name(engine)
    pending.reads.append((view.index, None))
    pending.dynamic = True
    if isinstance(view, DynamicRunsView):
        pending.runs = view


def tensor_copy_dynamic_dst(dst: Any, src: Any, dtype: Any = None, mask: Any = None, engine: Any = unknown_engine,
                            **kwargs: Any) -> None:
    """src copied to a destination at a dynamic offset along a free dimension of an SBUF/PSUM tile (Beta 1
    keywords dst=, src=; Beta 2 positional dst, src). Traced as a copy that also reads the offset's tile (`dyn=1`),
    its destination region every element some offset reaches."""
    target = _dynamic(dst, 'tensor_copy_dynamic_dst', 'destination')
    if isinstance(src, DynamicView):
        raise CompileError('tensor_copy_dynamic_dst: the source is a static access (one dynamic side per copy)')
    tile = copy(src, dtype=dtype, mask=mask)
    _mark_dynamic(tile.pending, target, engine)
    target.allowed = True
    try:
        copy_into(target, tile)
    finally:
        target.allowed = False
    return None


def memset(shape: Any = None, value: Any = 0, dtype: Any = None, mask: Any = None, engine: Any = unknown_engine,
           dst: Any = None, **kwargs: Any) -> Any:
    """A tile of `shape` filled with `value`; Beta 2's memset(dst, value) fills the tile dst."""
    if dst is not None or is_tile(shape):
        target = operand(dst if dst is not None else shape)
        copy_into(target, memset(target.shape, value, dtype or target.tensor.kind.public, mask, engine))
        return None
    if dtype is None:
        raise CompileError('memset needs a dtype (or, in the Beta 2 form, a destination tile)')
    run = begin()
    shape = tuple(int(s) for s in shape)
    if shape[0] > PARTITION_LIMIT:
        raise CompileError(f'memset: partition dimension {shape[0]} exceeds {PARTITION_LIMIT}')
    kind = kind_of(dtype)
    window, where = mask_of(mask, shape)
    result = np.full(window_shape(window, shape), value, kind.storage) if run.numerics else None
    pending = issue(run, 'memset', engine_name(engine), [], shape, kind, result, window)
    pending.where = where
    pending.consts = 1
    return pending.tile


def iota(expr: Any = None, dtype: Any = None, mask: Any = None, dst: Any = None, pattern: Any = None,
         offset: Any = 0, channel_multiplier: Any = 0, **kwargs: Any) -> Any:
    """Beta 1: iota(expr, dtype), the values of an affine expression. Beta 2: iota(dst, pattern, offset,
    channel_multiplier) writes offset + p * channel_multiplier + sum(step_i * j_i) over pattern [[step, count],
    ...] into dst (int32 arithmetic, cast to dst's dtype)."""
    if dst is None and is_tile(expr):
        dst, expr = expr, None
        if pattern is None and isinstance(dtype, (list, tuple)):
            pattern, dtype = dtype, None
    if dst is not None:
        if pattern is None or expr is not None or mask is not None:
            raise CompileError('iota(dst=...) takes pattern=[[step, count], ...], offset and channel_multiplier')
        target = operand(dst)
        copy_into(target, _iota_pattern(target, pattern, offset, channel_multiplier, dtype))
        return None
    if dtype is None:
        raise CompileError('iota needs a dtype (or, in the Beta 2 form, a destination tile and a pattern)')
    run = begin()
    if isinstance(expr, int):
        expr = Affine(expr, (), 2)
    if not isinstance(expr, Affine):
        raise CompileError('iota takes an affine nl.arange expression')
    return issue_iota(run, expr, kind_of(dtype)).tile


def _iota_pattern(target: Any, pattern: Any, offset: Any, channel_multiplier: Any, dtype: Any) -> Any:
    pairs = _pattern_pairs(pattern, 'iota')
    base, per_partition = int(offset), int(channel_multiplier)
    count = 1
    for _, n in pairs:
        count *= n
    if count != target.free_size:
        raise CompileError(f'iota: the pattern generates {count} elements per partition; dst holds '
                           f'{target.free_size}')
    run = begin()
    shape = target.shape
    kind = kind_of(dtype or target.tensor.kind.public)
    result = None
    if run.numerics:
        values = np.full((shape[0], 1), base, dtype=np.int64) + per_partition * np.arange(shape[0]).reshape(-1, 1)
        values = (values + _pattern_values(pairs)[None, :]).astype(np.int32)
        result = values.reshape(shape).astype(kind.storage)
    pending = issue(run, 'iota', 'pool', [], shape, kind, result)
    return pending.tile


def range_select(on_true_tile: Any, comp_op0: Any, comp_op1: Any, bound0: Any, bound1: Any,
                 reduce_cmd: Any = reduce_cmd.idle, reduce_res: Any = None, reduce_op: Any = np.maximum,
                 range_start: Any = 0, on_false_value: Any = None, dtype: Any = None, mask: Any = None,
                 **kwargs: Any) -> Any:
    """Keep element (p, j) of on_true_tile where (j + range_start) comp_op0 bound0[p] and (j + range_start) comp_op1
    bound1[p] (bounds are [P, 1] tiles), else on_false_value (fp32 min by default); optionally reduce the result
    into reduce_res (the vector engine's accumulation registers)."""
    first = alu(comp_op0)
    second = alu(comp_op1)
    fill = np.finfo(np.float32).min if on_false_value is None or on_false_value is Ellipsis else on_false_value
    start = float(range_start)

    def select(x, low, high):
        flat = partition_rows(x)
        position = np.arange(flat.shape[1], dtype=np.float32)[None, :] + start
        keep = first(position, low.reshape(flat.shape)) & second(position, high.reshape(flat.shape))
        return np.where(keep, flat, fill).reshape(x.shape)
    view = on_chip(operand(on_true_tile), 'range_select')
    low, high = operand(bound0), operand(bound1)
    tile = elementwise('select', 'dve', select, (view, _per_row(low, view), _per_row(high, view)), dtype, mask)
    _reduce_into(tile, reduce_res, reduce_op, reduce_cmd)
    return tile


def select_reduce(predicate: Any, on_true: Any, on_false: Any, reduce_res: Any = None,
                  reduce_cmd: Any = reduce_cmd.idle, reduce_op: Any = np.maximum, reverse_pred: Any = False,
                  dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """np.where(predicate, on_true, on_false) (on_false a scalar or a [P, 1] tile; reverse_pred negates the
    predicate), optionally reduced (max) along the free axes into reduce_res."""
    if reduce_res is not None:
        _checked_reduce_op('select_reduce', reduce_op, (np.maximum,), 'its page: "reduce_op only supports max"')
    view = on_chip(operand(on_true), 'select_reduce')
    condition = on_chip(operand(predicate), 'select_reduce')
    fallback = _per_row(operand(on_false), view) if is_tile(on_false) else on_false
    flip = bool(reverse_pred)

    def select(keep, values, other):
        chosen = keep != 0
        return np.where(~chosen if flip else chosen, values, other)
    tile = elementwise('select', 'dve', select, (condition, view, fallback), dtype, mask)
    _reduce_into(tile, reduce_res, reduce_op, reduce_cmd)
    return tile


def exponential(src: Any, max_value: Any = 0.0, reduce_res: Any = None, reduce_cmd: Any = reduce_cmd.idle,
                reduce_init: Any = 0.0, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """exp(src - max_value) on the vector engine (max_value a scalar or a [P, 1] tile), optionally summed along
    the free axes into reduce_res. NeuronCore-v4 only (the semantics are kept for a model of it)."""
    require_generation('nisa.exponential', 4, 'its page: "Available only on NeuronCore-v4 and newer"')
    view = on_chip(operand(src), 'exponential')
    shift = _per_row(operand(max_value), view) if is_tile(max_value) else max_value
    tile = elementwise('activation', 'dve', lambda x, m: np.exp(x - m), (view, shift), dtype, mask)
    if reduce_res is None:
        if reduce_init is not None and not (isinstance(reduce_init, SCALARS) and float(reduce_init) == 0.0):
            raise CompileError('exponential: reduce_init needs reduce_res (and reduce_cmd=load_reduce)')
        return tile
    command = _load_register(current(), tile.pending, reduce_cmd, reduce_init, np.add)
    _reduce_into(tile, reduce_res, np.add, command)
    return tile


def tensor_scalar_cumulative(src: Any, op0: Any, op1: Any, imm0: Any, imm1: Any = None,
                             reduce_cmd: Any = reduce_cmd.reset_reduce, reverse0: Any = False, dtype: Any = None,
                             mask: Any = None, **kwargs: Any) -> Any:
    """reg = op1(op0(src[:, i], imm0), reg); out[:, i] = reg along the free elements of each partition. reg starts
    from op1's identity (reset_reduce), imm1 (load_reduce: a scalar or a [P, 1] tile, one start value per
    partition, read by the instruction) or the vector engine's register (reduce)."""
    first = alu(op0)
    second = alu(op1)
    view = on_chip(operand(src), 'tensor_scalar_cumulative')
    run = current()
    loaded = reduce_cmd == _CMD.load_reduce and is_tile(imm1)
    start = 0.0 if loaded else _cumulative_start(second, reduce_cmd, imm1, run, view.shape[0])

    def scan(x, a, initial=None):
        flat = partition_rows(x)
        operand_value = np.reshape(a, flat.shape) if np.ndim(a) else a
        step = first(operand_value, flat) if reverse0 else first(flat, operand_value)
        out = np.empty(step.shape, dtype=np.float32)  # a float32 register, as on the engine
        begin_at = start if initial is None else np.reshape(initial, flat.shape)[:, 0]
        reg = np.broadcast_to(np.asarray(begin_at, dtype=np.float32), (flat.shape[0],)).copy()
        for i in range(step.shape[1]):
            reg = np.asarray(second(step[:, i], reg), dtype=np.float32)
            out[:, i] = reg
        run.accumulator = reg
        return out.reshape(x.shape)
    scalar = _per_row(operand(imm0), view) if is_tile(imm0) else imm0
    if loaded:
        # nkilib's cumsum carries the last column of one free tile into the next as imm1 ([P, 1])
        return elementwise('tensor_scalar', 'dve', scan, (view, scalar, _per_row(operand(imm1), view)), dtype, mask)
    return elementwise('tensor_scalar', 'dve', scan, (view, scalar), dtype, mask)


def _cumulative_start(ufunc: Any, command: Any, load: Any, run: Any, rows: int) -> Any:
    if command == reduce_cmd.load_reduce:
        return 0.0 if load is None else load
    if command == reduce_cmd.reduce and run.accumulator is not None and np.size(run.accumulator) == rows:
        return run.accumulator
    identities = {np.add: 0.0, np.subtract: 0.0, np.multiply: 1.0, np.maximum: -np.inf, np.minimum: np.inf}
    return identities.get(ufunc, 0.0)


def _reduce_into(tile: Any, reduce_res: Any, reduce_op: Any, command: Any) -> None:
    """The vector engine's free-axis reduction of an instruction's result into reduce_res."""
    if reduce_res is None:
        return
    pending = tile.pending
    run = current()
    target = destination(operand(reduce_res))
    if run.numerics:
        _accumulate_register(run, reduce_op, pending.result, target,
                             command if command not in (None, reduce_cmd.idle) else reduce_cmd.reset_reduce,
                             pending.window)
    pending.extra_writes = [(target, None)]


def _per_row(bound: Any, like: Any) -> Any:
    """A [P, 1] bound tile broadcast along the free axes of `like` (a stride-0 view, no instruction)."""
    if bound.free_size != 1 or bound.shape[0] != like.shape[0]:
        raise CompileError(f'a per-partition operand holds one value per partition ([{like.shape[0]}, 1]), '
                           f'got {bound.shape}')
    return View(bound.tensor, bound.block, bound.offset, like.shape,
                (bound.strides[0],) + (0,) * (len(like.shape) - 1))


def dropout(data: Any, prob: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """nisa.dropout: as nl.dropout, deterministic probabilities (0, 1) only."""
    return deterministic_dropout('nisa.dropout', data, prob, dtype, mask)


def affine_select(pred: Any = None, on_true_tile: Any = None, on_false_value: Any = None, dtype: Any = None,
                  mask: Any = None, pattern: Any = None, offset: Any = 0, channel_multiplier: Any = 0,
                  cmp_op: Any = None, **kwargs: Any) -> Any:
    """Beta 1: where(pred, on_true_tile, on_false_value) for an affine predicate. Beta 2 (pattern form):
    the predicate is cmp_op(offset + p * channel_multiplier + sum(step_i * j_i), 0) over pattern [[step, count],
    ...] (cmp_op defaults to equal), as nisa.iota generates its values."""
    if isinstance(pred, (list, tuple)):         # Beta 2 positional: (pattern, offset, channel_multiplier, tile, value)
        pattern, offset, channel_multiplier, on_true_tile, on_false_value = \
            pred, on_true_tile, on_false_value, dtype, mask
        pred = dtype = mask = None
    if pattern is not None:
        compare = alu(cmp_op if cmp_op is not None else np.equal)
        steps = _pattern_pairs(pattern, 'affine_select')
        base, per_partition = int(offset), int(channel_multiplier)

        def select_pattern(x, value, shape, window):
            affine = base + per_partition * np.arange(shape[0], dtype=np.int64).reshape(-1, 1) + \
                _pattern_values(steps)[None, :]
            return np.where(_windowed(compare(affine, 0).reshape(shape), window), x, value)
        return elementwise('select', 'pool', select_pattern, (on_true_tile, on_false_value), dtype, mask,
                           positional=True)
    if not isinstance(pred, Predicate):
        raise CompileError('affine_select takes an affine predicate (comparisons of nl.arange expressions) or, in '
                           'the Beta 2 form, pattern=, offset= and channel_multiplier=')

    def select(x, value, shape, window):
        return np.where(_windowed(pred.evaluate(shape), window), x, value)
    return elementwise('select', 'pool', select, (on_true_tile, on_false_value), dtype, mask, positional=True)


def _windowed(values: np.ndarray, window: Any) -> np.ndarray:
    """The part of values over an instruction's whole iteration space that a mask window keeps (the predicate of
    a masked affine_select holds at the element's own index, not at its offset within the window)."""
    if window is None:
        return values
    return values[tuple(slice(lo, hi) for lo, hi in window)]


def _pattern_pairs(pattern: Any, name: str) -> Any:
    try:
        return [(int(step), int(count)) for step, count in pattern]
    except (TypeError, ValueError):
        raise CompileError(f'{name}: pattern must be a list of [step, count] pairs of integers') from None


def _pattern_values(pairs: Any) -> np.ndarray:
    """sum(step_i * j_i) over the pattern's index space, flattened row-major."""
    values = np.zeros(1, dtype=np.int64)
    for step, count in pairs:
        values = (values[:, None] + step * np.arange(count, dtype=np.int64)[None, :]).reshape(-1)
    return values


def tensor_tensor_scan(data0: Any, data1: Any, initial: Any, op0: Any, op1: Any, reverse0: Any = False,
                       reverse1: Any = False, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """r[:, i] = op1(op0(data0[:, i], r[:, i-1]), data1[:, i]) with r[:, -1] = initial (scalar or [P, 1]);
    reverse0 makes data0 the rhs of op0 (op0(r[:, i-1], data0[:, i])), reverse1 data1 the lhs of op1."""
    first = alu(op0)
    second = alu(op1)
    a = operand(data0)
    init_view = operand(initial) if is_tile(initial) else None

    def scan(x, y, start):
        rows = x.shape[0]
        xs = np.ascontiguousarray(partition_rows(x).T)
        ys = np.ascontiguousarray(partition_rows(y).T)
        out = np.empty_like(xs)
        prev = (start.reshape(rows) if init_view is not None else np.full(rows, start, xs.dtype)).astype(xs.dtype)
        for i in range(xs.shape[0]):
            row = out[i]
            if reverse0:
                first(prev, xs[i], out=row)
            else:
                first(xs[i], prev, out=row)
            if reverse1:
                second(ys[i], row, out=row)
            else:
                second(row, ys[i], out=row)
            prev = row
        return out.T.reshape(x.shape)
    # arithmetic operators read their operands as float32, the scan's running value included: an int32 prefix sum
    # loses its low bits past 2**24, as the public radix sort notes on trn2 ("tensor_tensor_scan accumulates in
    # fp32 and drops low bits once the running total passes 2**24")
    return elementwise('scan', 'dve', scan, (a, data1, initial), dtype, mask, alu_ops=(first, second))


# ----- batch norm statistics -----
def bn_stats(data: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """Per partition: (count, mean, count*variance) of the even and of the odd free elements -> [P, 6]."""
    view = operand(data)
    if view.free_size > BN_STATS_FREE_LIMIT:
        raise CompileError(f'bn_stats: free size {view.free_size} exceeds {BN_STATS_FREE_LIMIT}')

    def stats(x):
        flat = partition_rows(x).astype(np.float32)
        groups = []
        for part in (flat[:, 0::2], flat[:, 1::2]):
            count = np.full((flat.shape[0], 1), part.shape[1], np.float32)
            m = part.mean(axis=1, keepdims=True) if part.shape[1] else np.zeros_like(count)
            m2 = ((part - m) ** 2).sum(axis=1, keepdims=True)
            groups += [count, m, m2]
        return np.concatenate(groups, axis=1)
    window, where = mask_of(mask, view.shape)
    if where is not None:
        raise CompileError('bn_stats: the mask must be a box (per-axis bounds); this one selects scattered elements')
    if window is not None:          # the masked box (indices outside it may be out of bounds)
        offset, shape = view.clip(window)
        view = View(view.tensor, view.block, offset, shape, view.strides)
    return _shaped('bn_stats', view, stats, (view.shape[0], 6), dtype)


def bn_aggr(data: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """Combine bn_stats groups [P, 6k] into (mean, variance) [P, 2]."""
    unapplied_mask('nisa.bn_aggr', mask)
    view = operand(data)
    if view.free_size % 3:
        raise CompileError('bn_aggr takes the [P, 6k] output of bn_stats')

    def aggregate(x):
        groups = x.reshape(x.shape[0], -1, 3).astype(np.float32)  # float32 arithmetic, as on the engine
        count, means, m2 = groups[..., 0], groups[..., 1], groups[..., 2]
        total = count.sum(axis=1)
        mean = (count * means).sum(axis=1) / np.maximum(total, 1)
        var = (m2 + count * (means - mean[:, None]) ** 2).sum(axis=1) / np.maximum(total, 1)
        return np.stack([mean, var], axis=1)
    return _shaped('bn_aggr', view, aggregate, (view.shape[0], 2), dtype)


def _shaped(op, view, fn, shape, dtype):
    run = begin()
    on_chip(view, op)
    kind = result_kind(dtype, [view])
    result = fit(fn(view.array()), kind, shape) if run.numerics else None
    pending = issue(run, op, 'dve', [(view, None)], shape, kind, result)
    return pending.tile


# ----- DMA -----
def dma_copy(dst: Any, src: Any, mask: Any = None, oob_mode: Any = None, engine: Any = None, dst_rmw_op: Any = None,
             unique_indices: Any = True, dge_mode: Any = None, **kwargs: Any) -> None:
    """dst = src by the DMA engines (cast to dst's format); with dst_rmw_op=nl.add (the only operator the API
    pages allow) dst = dst + src, computed in float32, the DMA reading dst as well; into an indirect (scatter)
    destination each index adds once, repeated indices accumulating (as nisa.dma_compute)."""
    run = begin()
    patterns = [v for v in (dst, src) if isinstance(v, DynamicView) and v.pattern]
    for view in patterns:       # an on-chip .ap(scalar_offset=...) side: a DMA with a dynamic start address
        view.allowed = True
    try:
        target = destination(operand(dst), dma=True)
        source = operand(src)
    finally:
        for view in patterns:
            view.allowed = False
    _indirect_dge_mode('dma_copy', dge_mode, (target, source))
    _dma_endpoints('dma_copy', source, target, src)
    if dge_mode == 'hwdge' and not same_kind(source.tensor.kind, target.tensor.kind.public):
        # NKI 0.3.0 update guide: "source and destination element types must match when using
        # dge_mode=dge_mode.hwdge ... HWDGE generates descriptors without interpreting data content, so no type
        # casting occurs" (0.2.0 did not check it: "undefined behavior")
        raise CompileError(f'dma_copy: dge_mode=hwdge from {source.tensor.kind.public} to {target.tensor.kind.public}: '
                           'a hardware-DGE DMA moves raw bytes without casting, so source and destination element '
                           'types must match (NKI 0.3.0 update guide; .view() one side, or use swdge / none to cast)')
    add = _rmw_add(dst_rmw_op, unique_indices)
    scatter_add = add and isinstance(target, IndirectView)
    gather_skip = False
    if _dma_oob_mode(oob_mode) == 'skip':
        if add:
            raise CompileError('dma_copy: with dst_rmw_op only oob_mode=oob_mode.error is allowed (nisa.dma_copy)')
        if isinstance(target, IndirectView):
            target.skip = True      # a scatter: rows whose index is out of bounds are not written
        gather_skip = isinstance(source, IndirectView)      # a gather: dst keeps its rows of out-of-bounds index
    if isinstance(source, IndirectView):
        source.skip = gather_skip
    if target.shape != source.shape and target.free_size * target.shape[0] != source.free_size * source.shape[0]:
        raise CompileError(f'dma_copy: source shape {source.shape} does not match destination {target.shape}')
    window, where = mask_of(mask, source.shape)
    if scatter_add and (window is not None or where is not None):
        raise CompileError('dma_copy: a masked dst_rmw_op scatter is not modelled by the simulator')
    if where is not None:
        # a mask that is not a box (`i_p + i_f < n`, `(a < n) & (i * 128 + j < m)`): only the elements where it
        # holds are copied (the API page: the mask "controls whether/how this instruction is executed")
        if isinstance(source, IndirectView) or isinstance(target, IndirectView) or target.shape != source.shape:
            raise CompileError('dma_copy: an elementwise mask (not a box of index ranges) is modelled only between '
                               'a source and a destination of the same shape without indirect indexing')
        where = np.broadcast_to(where, source.shape)
        # indices the mask removes may lie outside the source (the padding of a partial tile): checked, and
        # read, only where the mask keeps the element
        source = source.checked_under(where)
    if run.numerics and scatter_add:     # each index adds once, repeated indices accumulating (as dma_compute)
        target.combine(np.add, source.array().reshape(target.shape).astype(np.float32))
    elif run.numerics:
        data = source.array(window) if where is None else source.masked_array(where, 0)
        part = window if target.shape == source.shape else None
        out = target.writable(part)
        values = out.astype(np.float32) + data.reshape(out.shape).astype(np.float32) if add else \
            data.reshape(out.shape)
        written = where
        if gather_skip:             # (no elementwise mask here: refused above for an indirect source)
            written = _rows_kept(source.kept(window), data.shape).reshape(out.shape)
        # the DMA casts to dst's format (bfloat16, fp8, ...); masked-off elements keep what dst held
        write_in_format(out, values, target.tensor.kind, written)
        target.write_back(part, out, where)
        if isinstance(target, IndirectView):      # a scatter: out is the gathered copy
            target.scatter(out, window if target.shape == source.shape else None)
    direction = _dma_direction(target, [source])
    reads = [(source, window)] + [(v.index, None) for v in (source, target) if isinstance(v, IndirectView)]
    if add:
        reads.append((target, window if target.shape == source.shape else None))
    pending = Pending('dma_copy', 'dma', run.line(), reads, None, None, window)
    pending.dma = direction
    pending.rmw = add
    direct(run, pending, target, window if target.shape == source.shape else None, where)


def _dma_endpoints(instruction: str, source: Any, target: Any, src: Any) -> None:
    """A DMA moves data between HBM and SBUF: "Both src and dst tiles can be in device memory (HBM) or SBUF" (the
    Beta 1 nki.isa.dma_copy page), "data movement between memory locations (SBUF or HBM)" (the Beta 2 page), "The 16
    DMA Engines are connected to both the off chip HBM and the on-chip SRAM, called SBUF" (the NKI DMA overview).
    A PSUM tensor the kernel declared has no DMA path: its tile goes through SBUF (nisa.tensor_copy) first, as
    nl.store does it. An instruction's result that no kernel tensor holds (`t = nisa.nc_transpose(x)` in a Beta 1
    kernel) is placed by the compiler, which copies it as it does for a matmul operand (_evicted), and is left be."""
    anonymous = isinstance(src, Tensor) and src.produced and src.alias is None
    for side, view in (('source', source), ('destination', target)):
        if view.tensor.buffer is memory.psum and not (side == 'source' and anonymous):
            raise CompileError(f'{instruction}: the {side} is a PSUM tile; a DMA moves data between HBM and SBUF '
                               f'("Both src and dst tiles can be in device memory (HBM) or SBUF", nki.isa.dma_copy): '
                               f'copy the PSUM tile to SBUF with nisa.tensor_copy first')


def dma_compute(dst: Any, srcs: Any, scales: Any = None, reduce_op: Any = None, unique_indices: Any = True,
                oob_mode: Any = None, **kwargs: Any) -> None:
    """dst = srcs[0] + srcs[1] + ... by the DMA engines, in float32, cast to dst's format (nki.isa.dma_compute: the
    API pages allow reduce_op=nl.add and scales of 1.0 only). Both positional orders of the pages are taken:
    (dst, srcs, scales, reduce_op) and (dst, srcs, reduce_op, scales). A source that is dst itself makes it a
    read-modify-write; into an indirect (scatter) destination each index adds once, repeated ones accumulating."""
    if reduce_op is None or isinstance(reduce_op, (list, tuple)):
        scales, reduce_op = reduce_op, scales
    if reduce_op is None or not callable(reduce_op) or alu(reduce_op) is not np.add:
        raise CompileError(f'dma_compute: reduce_op {reduce_op!r} is not supported (the API page allows nl.add only)')
    _check_unique_indices('dma_compute', unique_indices)
    skip = _dma_oob_mode(oob_mode, 'dma_compute') == 'skip'
    if not isinstance(srcs, (list, tuple)) or not srcs:
        raise CompileError('dma_compute: srcs is a list of source tensors')
    if scales is not None and (not isinstance(scales, (list, tuple)) or len(scales) != len(srcs)
                               or any(float(v) != 1.0 for v in scales)):
        raise CompileError(f'dma_compute: scales {scales!r}: the API page allows one scale of 1.0 per source only')
    run = begin()
    target = destination(operand(dst))
    views = [operand(v) for v in srcs]
    itself = [_same_access(v, target) for v in views]
    if sum(itself) > 1:
        raise CompileError('dma_compute: dst appears more than once among srcs')
    others = [v for v, same in zip(views, itself) if not same]
    elements = target.free_size * target.shape[0]
    for v in others:
        if v.free_size * v.shape[0] != elements:
            raise CompileError(f'dma_compute: source shape {v.shape} does not match destination {target.shape}')
    accumulate = any(itself)
    if isinstance(target, IndirectView) and not accumulate:
        raise CompileError('dma_compute: an indirect (scatter) destination is a read-modify-write: list dst itself '
                           'among srcs')
    # oob_mode.skip (the API page: "Silently skips any operations involving out-of-bounds indices"): a scatter row
    # whose index is out of bounds is not updated, nor is a destination row whose gathered source row is
    gathered = [v for v in others if isinstance(v, IndirectView)]
    for v in gathered + ([target] if isinstance(target, IndirectView) else []):
        v.skip = skip
    if run.numerics:
        total = np.zeros(target.shape, dtype=np.float32)
        for v in others:
            total += v.array().reshape(target.shape).astype(np.float32)
        if isinstance(target, IndirectView):
            target.combine(np.add, total)         # once per index, repeated indices accumulating
        else:
            out = target.array()
            kept = None
            if skip and gathered:
                kept = np.ones(target.shape[0], dtype=bool)
                for v in gathered:
                    kept &= np.broadcast_to(v.kept(), kept.shape)
                kept = _rows_kept(kept, target.shape)
            write_in_format(out, out.astype(np.float32) + total if accumulate else total, target.tensor.kind, kept)
    direction = _dma_direction(target, others)
    reads = [(v, None) for v in others] + [(v.index, None) for v in views if isinstance(v, IndirectView)]
    if accumulate:
        reads.append((target, None))
    pending = Pending('dma_copy', 'dma', run.line(), reads, None, None, None)
    pending.dma = direction
    pending.rmw = accumulate
    direct(run, pending, target, None)


def _dma_direction(target: View, sources: List[View]) -> str:
    """The trace's DMA direction: `load` into on-chip memory from HBM sources only, `store` to HBM from on-chip
    sources only, else `copy`."""
    on_chip = {v.tensor.buffer.on_chip for v in sources}
    if target.tensor.buffer.on_chip and on_chip == {False}:
        return 'load'
    if not target.tensor.buffer.on_chip and on_chip == {True}:
        return 'store'
    return 'copy'


def _check_unique_indices(name: str, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise CompileError(f'{name}: unique_indices is True or False, not {value!r}')


def _same_access(a: Any, b: Any) -> bool:
    """Do two views access the same elements (for an indirect access: the same pattern and index tile region)?"""
    if a is b:
        return True
    if isinstance(a, IndirectView) != isinstance(b, IndirectView) or not isinstance(a, View) or not a.same_region(b):
        return False
    return not isinstance(a, IndirectView) or (a.index.same_region(b.index) and a.row_stride == b.row_stride
                                               and a.rows == b.rows and a.scalar == b.scalar)


def _rmw_add(op: Any, unique_indices: Any) -> bool:
    _check_unique_indices('dma_copy', unique_indices)
    if op is None:
        return False
    if alu(op) is not np.add:
        raise CompileError(f'dma_copy: dst_rmw_op {op!r} is not supported (the API page allows nl.add only)')
    return True


def _indirect_dge_mode(instruction: str, mode: Any, views: Any) -> None:
    """The DGE reference page (nki/deep-dives/nki-dge): hwdge "does not support indirect (gather/scatter)
    operations"; with `.ap()` vector_offset, dma_copy and dma_transpose take dge_mode "unknown or swdge" ("swdge
    ... is the only mode that supports indirect (gather/scatter) operations with dynamic indices from SBUF")."""
    if mode in (None, dge_mode.unknown, dge_mode.swdge):
        return
    if any(isinstance(v, IndirectView) and not v.scalar for v in views):
        raise CompileError(f'{instruction}: dge_mode={mode} with an indirect (gather/scatter) access: an access with '
                           'vector offsets takes dge_mode unknown or swdge, the only mode that supports indirect '
                           'operations with dynamic indices from SBUF (NKI DGE reference)')
    if mode == dge_mode.none and any(isinstance(v, IndirectView) for v in views):
        raise CompileError(f'{instruction}: dge_mode=none with a dynamic (scalar_offset) access: "When either sw_dge '
                           'or hw_dge mode is used, the src and dst tensors can have a dynamic start address" '
                           '(nki.isa.dma_copy); without descriptor generation the addresses are static')


def _rows_kept(kept: np.ndarray, shape: Tuple[int, ...]) -> np.ndarray:
    """The elementwise mask of an access of `shape` whose rows (first axis) are `kept` (IndirectView.kept)."""
    return np.broadcast_to(kept.reshape((-1,) + (1,) * (len(shape) - 1)), shape)

class dge_mode:
    """How DMA descriptors are generated (accepted, no effect on results)."""
    unknown = 'unknown'
    swdge = 'swdge'
    hwdge = 'hwdge'
    none = 'none'


class oob_mode:
    """Out-of-bounds handling of dynamic DMA. The simulator raises on an out-of-bounds index, except under
    oob_mode.skip: a nisa.dma_copy scatter does not write its out-of-bounds rows, a gather leaves those rows of dst
    as they were, and nisa.dma_compute does not update them."""
    error = 'error'
    skip = 'skip'


def _dma_oob_mode(mode: Any, callee: str = 'dma_copy') -> str:
    """`oob_mode=` of a DMA instruction: oob_mode.error (the default) or oob_mode.skip (also spelled as strings)."""
    if mode is None:
        return 'error'
    if mode in ('error', 'skip'):
        return str(mode)
    raise CompileError(f'{callee}: oob_mode={mode!r} is not an oob_mode (oob_mode.error or oob_mode.skip)')


class _Engines:
    """nisa.engine (Beta 2): nisa.engine.vector is nisa.vector_engine, and so on."""
    unknown = unknown_engine
    tensor = tensor_engine
    vector = vector_engine
    scalar = scalar_engine
    activation = scalar_engine
    gpsimd = gpsimd_engine
    dma = dma_engine
    sync = _sync_engine


engine = _Engines()


# The Beta 2 positional order (the `import nki` isa stub of aws-neuron-sdk, nki/api/nki/isa/__init__.py) of the
# functions whose parameters after dst are ordered differently from the simulator's (e.g. `tensor_copy(dst, src,
# engine=engine.unknown, name=None)`, where the simulator's third parameter is dtype). A Beta 2 destination-first
# call of these binds its positional arguments by these names.
_BETA2_POSITIONAL = {
    nc_matmul: ('dst', 'stationary', 'moving', 'is_stationary_onezero', 'is_moving_onezero', 'is_transpose',
                'accumulate', 'tile_position', 'tile_size', 'perf_mode', 'name'),
    nc_transpose: ('dst', 'data', 'engine', 'name'),
    activation: ('dst', 'op', 'data', 'bias', 'scale', 'reduce_op', 'reduce_res', 'reduce_cmd', 'name'),
    tensor_reduce: ('dst', 'op', 'data', 'axis', 'negate', 'keepdims', 'name'),
    tensor_tensor: ('dst', 'data1', 'data2', 'op', 'engine', 'name'),
    tensor_scalar: ('dst', 'data', 'op0', 'operand0', 'reverse0', 'op1', 'operand1', 'reverse1', 'engine', 'name'),
    scalar_tensor_tensor: ('dst', 'data', 'op0', 'operand0', 'op1', 'operand1', 'reverse0', 'reverse1', 'name'),
    tensor_tensor_scan: ('dst', 'data0', 'data1', 'initial', 'op0', 'op1', 'reverse0', 'reverse1', 'name'),
    tensor_copy: ('dst', 'src', 'engine', 'name'),
    reciprocal: ('dst', 'data', 'name'),
    memset: ('dst', 'value', 'engine', 'name'),
    iota: ('dst', 'pattern', 'offset', 'channel_multiplier', 'name'),
}
for _function, _order in _BETA2_POSITIONAL.items():
    setattr(_function, 'beta2_positional', _order)


def _affine_select_positional(args: Any) -> Any:
    """The Beta 2 positional order of an affine_select call, told by where its on_true_tile (the only tile after
    dst) stands: NKI 0.3.0 moved offset to a keyword after cmp_op (the 0.3.0 update guide: `nisa.affine_select(dst,
    pattern, channel_multiplier, on_true, on_false, offset=offset)`, before `(dst, pattern, offset,
    channel_multiplier, on_true, on_false)`). None when neither position holds a tile."""
    if len(args) >= 4 and is_tile(args[3]):
        return ('dst', 'pattern', 'channel_multiplier', 'on_true_tile', 'on_false_value', 'cmp_op', 'offset', 'name')
    if len(args) >= 5 and is_tile(args[4]) and not is_tile(args[3]):
        return ('dst', 'pattern', 'offset', 'channel_multiplier', 'on_true_tile', 'on_false_value', 'cmp_op', 'name')
    return None


setattr(affine_select, 'beta2_positional_for', _affine_select_positional)


def _dma_compute_positional(args: Any) -> Any:
    """The positional order of a Beta 2 dma_compute call, told by its third argument: an operator is NKI 0.3.0's
    `(dst, srcs, reduce_op, scales=None, unique_indices=True)`, a list of scales the earlier `(dst, srcs, scales,
    reduce_op)` (the 0.3.0 update guide, "nisa.dma_compute - Parameter Reorder")."""
    if len(args) < 3:
        return None
    if callable(args[2]) and not isinstance(args[2], (list, tuple)):
        return ('dst', 'srcs', 'reduce_op', 'scales', 'unique_indices', 'name')
    return ('dst', 'srcs', 'scales', 'reduce_op', 'name')


setattr(dma_compute, 'beta2_positional_for', _dma_compute_positional)

check_module('nisa', globals(), (__name__, isa_select.__name__, isa_topk.__name__), dst_first=True,
             skip=frozenset({'get_nc_version', 'pe_transpose'}))


def __getattr__(name: str) -> Any:
    missing_api('nisa', name, globals())
