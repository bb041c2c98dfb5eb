"""neuronxcc.nki.language (nl): declarations, DMA, and the high-level tile operations, over numpy.

Every operation issues one trace instruction (nl.matmul without transpose_x issues the transpose, PSUM
eviction copy and matmul the compiler would). Numerics are computed in the storage dtype (fp32 for all
NKIBench kernels) and skipped in timing-only mode.
"""
import contextlib
import hashlib
import sys
from typing import Any, Tuple

import numpy as np

from . import compute, isa, memory, runtime, target
from .compute import (  # noqa: F401  (re-exported as nl.*)
    abs_max, abs_min, add, bitwise_and, bitwise_or, bitwise_xor, broadcast_to, copy, divide, elementwise, equal,
    full_tile, greater, greater_equal, left_shift, less, less_equal, logical_and, logical_or, logical_xor, maximum,
    fmod, minimum, mod, multiply, not_equal, power, reduce, reshape_view, right_shift, subtract)
from .compute import alu_name as _alu_name
from .compute import deterministic_dropout, element_count, free_elements
from .affine import Predicate, arange, ds, mgrid  # noqa: F401  (re-exported as nl.*)
from .beta import code_uses_beta2
from .call_forms import check_module
from .dtypes import (  # noqa: F401  (nl.* dtypes)
    MX_DTYPES, NumericType, bfloat16, float8_e4m3, float8_e4m3fn, float8_e5m2, kind_of, numpy_scalar_dtype, tfloat32)
from .dtypes import check_on_chip as _check_on_chip
from .dtypes import to_storage as _to_storage
from .dtypes import value_in_format, write_in_format
from .errors import CompileError, missing_api
from .indirect import IndirectView
from .loops import affine_range, dynamic_range, is_first_iteration, sequential_range, static_range  # noqa: F401
from .operands import (broadcast_shape, fit, on_chip, padded, result_kind, tile_or_scalar,
                       window_shape)
from .operands import mask as _mask
from .operands import unapplied_mask
from .ops import BYPASS, alu
from .placement import PlacedMemory, Placement, at_address
from .runtime import begin, issue, operand, operand_reads
from .tensors import PARTITION_LIMIT, UNINITIALIZED, Tensor, hbm_declared, hbm_tensor, par_dim  # noqa: F401
from .views import View, destination

NkiTensor = Tensor          # the tensor type of NKI 0.3+ annotations (`x: nl.NkiTensor`)


class NKIObject:
    """Base class of NKI 0.3+ kernel dataclasses and configuration objects (a plain Python object here)."""


# ----- buffers and dtypes -----
sbuf = memory.sbuf
psum = memory.psum
hbm = memory.hbm
shared_hbm = memory.shared_hbm
private_hbm = memory.private_hbm
MemoryRegion = memory.MemoryRegion


def _memory_of(name: str, buffer: Any) -> memory.Buffer:
    """The memory a buffer query is asked about: a memory (`t.buffer`, `nl.sbuf`, ...) or a direct-allocation
    request (its memory); anything else is refused by name rather than answered."""
    if isinstance(buffer, Placement):
        buffer = buffer.buffer
    if not isinstance(buffer, memory.Buffer):
        raise CompileError(f'nl.{name}({buffer!r}): expects a memory (a tensor\'s .buffer, nl.sbuf, nl.psum, '
                           'nl.shared_hbm, ...)')
    return buffer


def is_hbm(buffer: Any) -> bool:
    """NKI 0.3+ buffer queries (the Beta 2 stub: "Check if buffer is any HBM type", ...): HBM is nl.hbm,
    nl.private_hbm, nl.shared_hbm (and a kernel's constants); on chip is SBUF or PSUM."""
    return not _memory_of('is_hbm', buffer).on_chip


def is_on_chip(buffer: Any) -> bool:
    return _memory_of('is_on_chip', buffer).on_chip


def is_sbuf(buffer: Any) -> bool:
    return _memory_of('is_sbuf', buffer) is memory.sbuf


def is_psum(buffer: Any) -> bool:
    return _memory_of('is_psum', buffer) is memory.psum


def _scalar_call(name: str) -> None:
    """`nl.float32(1.0)`: a numpy scalar in a Beta 1 kernel, where nl.float32 is np.float32; refused in a module
    written against Beta 2 (judged as its kernels are, beta.code_uses_beta2), where nl.float32 is the string
    'float32' and the call fails on the device's compiler ('str' object is not callable)."""
    frame = sys._getframe(2)        # the caller of nl.float32(...) (numpy_scalar_dtype's constructor called this)
    if code_uses_beta2(frame.f_code, frame.f_globals):
        raise CompileError(f'nl.{name}(...) calls a data type: in NKI Beta 2 nl.{name} is the name {name!r} '
                           f"(nki.language.{name} = {name!r}), not a function, and the call fails ('str' object is "
                           f'not callable); write np.{name}(...) or the number itself', frame.f_lineno)


# numpy's scalar types, as NKI Beta 1 defines them (`float32 = np.float32`: nl.float32(1.0) is a scalar), that compare,
# hash and print as the numpy dtypes the API pages give: str(nl.float32) is 'float32', as str(t.dtype) of a float32
# tensor (the NKI Library's allocator.sizeinbytes compares the two); see dtypes.numpy_scalar_dtype
float32, float16, float64 = (numpy_scalar_dtype(t, _scalar_call) for t in (np.float32, np.float16, np.float64))
int8, int16, int32, int64 = (numpy_scalar_dtype(t, _scalar_call) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (numpy_scalar_dtype(t, _scalar_call)
                                 for t in (np.uint8, np.uint16, np.uint32, np.uint64))
bool_ = numpy_scalar_dtype(np.bool_, _scalar_call)
# dtype objects with .min/.max that np.dtype() accepts (nl.fp32.min, np.dtype(nl.bf16))
fp32, fp16, fp64 = NumericType(np.float32), NumericType(np.float16), NumericType(np.float64)
bf16, tf32, fp8_e4m3, fp8_e5m2 = bfloat16, tfloat32, float8_e4m3, float8_e5m2
# the packed MX dtypes: named and compared only (dtypes.PackedMxType); any use is a CompileError naming MX
float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4 = (MX_DTYPES[name] for name in (
    'float8_e4m3fn_x4', 'float8_e5m2_x4', 'float4_e2m1fn_x4'))


class _SbufSizes(type):
    """tile_size's SBUF figures, of the simulated NeuronCore (nki_sim.target: 192 KiB per partition on trn1,
    224 KiB on trn2)."""

    @property
    def total_available_sbuf_size(cls) -> int:     # bytes per partition
        return target.sbuf_partition_bytes()

    @property
    def sbuf_fmax(cls) -> int:                     # in float32 elements
        return target.sbuf_partition_bytes() // 4

    @property
    def sbuf_fmax_bytes(cls) -> int:
        return target.sbuf_partition_bytes()

    @property
    def sbuf_size_bytes(cls) -> int:
        return 128 * target.sbuf_partition_bytes()


class tile_size(metaclass=_SbufSizes):
    pmax = 128
    psum_fmax = 512
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_partition_max = 128
    # NKI 0.3+ names (nki.language.tile_size page): the same limits in bytes, per PSUM bank, and for SBUF
    psum_fmax_bytes = 2048
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_num_banks = 8
    # No API page gives these two numbers; they are the NKI front end's (KLR, aws-neuron's tracer: its kernel
    # environment binds nl.tile_size.psum_min_align to 4 and sbuf_min_align to 1). The simulator places tensors
    # itself and checks no free-dimension address alignment; a kernel uses them in its own layout arithmetic.
    psum_min_align = 4
    sbuf_min_align = 1


def finfo(dtype: Any) -> Any:
    return np.finfo(kind_of(dtype).storage)


def iinfo(dtype: Any) -> Any:
    return np.iinfo(kind_of(dtype).storage)


def static_cast(input_data: Any, dtype: Any) -> Any:
    """`nl.static_cast(input_data, dtype)` (the Beta 1 nki.language source: "cast a scalar or array to a new dtype",
    input "scalar or array", dtype "string type or numpy dtype"): a trace-time numpy cast, values converted and
    rounded as a write into that format rounds them (bfloat16 and float8 held in float32 storage). A tile is cast by
    an instruction, not by this."""
    if isinstance(input_data, (Tensor, View)):
        raise CompileError('nl.static_cast casts a Python or numpy scalar or array at trace time; a tile is cast by an '
                           'instruction (nisa.tensor_copy into a tile of that dtype, or the operation\'s dtype=)')
    kind = kind_of(dtype)
    values = np.asarray(input_data)
    held = np.empty(values.shape, kind.storage)
    write_in_format(held, values, kind)
    return held if values.ndim else held[()]


# ----- SPMD -----
def program_id(axis: Any) -> Any:
    ids = runtime.current().program_ids
    return ids[axis] if axis < len(ids) else 0


def num_programs(axes: Any = None) -> Any:
    grid = runtime.current().grid
    if axes is None:
        return int(np.prod(grid)) if grid else 1
    return grid[axes] if axes < len(grid) else 1


def program_ndim() -> Any:
    return len(runtime.current().grid)


def spmd_dim(*sizes: Any) -> Any:
    """A grid axis of prod(sizes) programs; an `nl.nc(n)` factor spreads them over n NeuronCores."""
    total = int(np.prod([int(s) for s in sizes]))
    cores = int(np.prod([getattr(s, 'cores', 1) for s in sizes]))
    return runtime.SpmdSize(total, cores) if cores > 1 else total


def nc(count: Any) -> Any:
    """A launch-grid size of `count` programs, one per NeuronCore (program i runs on core i mod count)."""
    count = int(count)
    if count not in (1, 2):
        raise CompileError(f'nl.nc({count}): a launch spreads over 1 or 2 NeuronCores (the cores sharing HBM)',
                           runtime.current().line() if runtime.RUN is not None else 0)
    return runtime.SpmdSize(count, count) if count > 1 else count


def device_print(*args: Any, **kwargs: Any) -> None:
    pass


def no_reorder() -> Any:
    """`with nl.no_reorder():` keeps the block's operations in program order. The simulator runs and traces every
    kernel in program order already, so the block runs unchanged."""
    return contextlib.nullcontext()


# ----- declarations -----
def _checked_shape(shape: Any, line: int) -> Tuple[Any, ...]:
    """A declared shape as a tuple of its dimensions (a generator or map read once). It is an integer or a sequence
    of integers (nl.ndarray / nl.zeros: "shape - the shape of the tensor", "Similar to numpy.zeros"); any other form
    is named here, where the simulator's own int() of a dimension would otherwise end the run with a Python
    TypeError."""
    try:
        if isinstance(shape, str):
            raise TypeError
        dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
        for d in dims:
            int(d)
    except (TypeError, ValueError):
        raise CompileError(f'shape {shape!r}: a tensor shape is an integer or a tuple of integers, e.g. (128, 512)',
                           line) from None
    return dims


def _declare(shape, dtype, buffer, name, fill, initialized=True):
    run = runtime.current()
    line = run.line()
    shape = _checked_shape(shape, line)
    if buffer is None:
        buffer = memory.sbuf
    placed = None
    if isinstance(buffer, Placement):       # direct allocation (ncc.sbuf.mod_alloc, ...)
        placed, buffer = buffer, buffer.buffer
    if not isinstance(buffer, memory.Buffer):
        raise CompileError(f'unknown buffer {buffer!r}', line)
    if buffer.on_chip:
        # a PSUM tensor (per block in Beta 1) spans up to all 8 banks of a partition (tile_size: psum_fmax "does
        # not represent the free-dim size per partition"; psum_num_banks; a Beta 1 kernel ran so on a trn2)
        tensor = Tensor(buffer, kind_of(dtype), shape, line, name, run.numerics)
        # uninitialized PSUM too, but a matmul's first add into an element starts its accumulation group and
        # overwrites it (runtime._store, memory.Alloc.fresh)
        tensor.init = value_in_format(fill, tensor.kind) if initialized else UNINITIALIZED
        if placed is not None:
            _place(run, tensor, placed, initialized, line)
        return tensor
    kind = kind_of(dtype)
    if not kind.engine_format:      # (an argument in such a format is the problem's; one the kernel declares is not)
        _check_on_chip(kind)
    if buffer is memory.shared_hbm:
        ordinal = run.shared_ordinal
        run.shared_ordinal += 1
        named = _named_shared(run, shape, kind, name, line)
        if named is not None:
            if ordinal >= len(run.shared_outputs):      # keeps the ordinals of later declarations aligned
                run.shared_outputs.append(named)
            return named
        if ordinal < len(run.shared_outputs) and not run.shared_outputs[ordinal].name and not name:
            return run.shared_outputs[ordinal]
    tensor = hbm_declared(tuple(int(d) for d in shape), dtype, buffer, run.numerics, line, name, initialized)
    if fill:
        tensor.hbm_alloc.data[...] = value_in_format(fill, tensor.kind)
    if buffer is memory.shared_hbm:
        run.shared_outputs.append(tensor)
        if name and isinstance(name, str):
            run.shared_names[name].append(tensor)
    else:
        run.private_hbm.append(tensor)
    return tensor


def _named_shared(run: Any, shape: Any, kind: Any, name: Any, line: int) -> Any:
    """The shared_hbm tensor another program of the launch declared under the same `name`, if any: the k-th
    declaration of a name in a program is the k-th of the first program that declared it. nl.ndarray's page (NKI
    2.32+): a name "has to be unique for tensors on each Physical NeuronCore", and shared_hbm tensors "will point
    to the same underlying memory as long as they have the same name, even if the tensors appear in different
    control flow" (unnamed ones are matched by declaration order). None when this declaration is the name's first
    of its occurrence (a new tensor)."""
    if not name or not isinstance(name, str):
        return None
    key = (run.program_ids, name)
    occurrence = run.shared_name_counts.get(key, 0)
    run.shared_name_counts[key] = occurrence + 1
    earlier = run.shared_names.setdefault(name, [])
    if occurrence >= len(earlier):
        return None
    first = earlier[occurrence]
    if tuple(int(d) for d in shape) != tuple(first.shape) or kind.public != first.kind.public:
        raise CompileError(f'shared_hbm tensor {name!r} is declared as {tuple(shape)} {kind.public}, and as '
                           f'{tuple(first.shape)} {first.kind.public} by another program (shared_hbm tensors of one '
                           'name are one memory)', line)
    return first


# Bytes per partition a fixed address may reach. `address=` is an NKI 0.4+ (Beta 2) argument, and Beta 2 targets
# Trainium2 and Trainium3 (NKI FAQ), whose SBUF is 28 MiB per NeuronCore-v3 (Trainium2 Architecture Guide for NKI)
# and 32 MiB per NeuronCore-v4: 224 KiB per partition on the smaller, above the 192 KiB of trn1 that
# tile_size.total_available_sbuf_size gives (the NKI Library places its SbufManager heap up to 200 KiB in mlp_tkg
# and counts 224 KiB of SBUF in mlp_cte and the MoE kernels).
_PARTITION_BYTES = {'sbuf': 28 * 1024 * 1024 // 128, 'psum': 16 * 1024}


def _check_address(address: Any, tensor: Any, line: int) -> Tuple[int, int]:
    """`nl.ndarray(..., address=(partition_offset, free_offset))`: a fixed placement in SBUF / PSUM, checked (two
    integers that keep the tensor inside the memory's partitions and bytes per partition; nl.all shadows the builtin
    here, hence no all()) and returned. The tensor keeps its own storage; nki_sim/placement.py checks reads of
    bytes another placed tensor wrote over."""
    if not isinstance(tensor, Tensor) or not tensor.buffer.on_chip:
        raise CompileError(f'nl.ndarray(address={address!r}): a fixed address places a tensor in SBUF or PSUM, '
                           f'not in {tensor.buffer!r}', line)
    if not isinstance(address, (tuple, list)) or len(address) != 2 or \
            [a for a in address if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a < 0]:
        raise CompileError(f'nl.ndarray(address={address!r}): the address is a pair of non-negative integers '
                           f'(partition_offset, free_offset)', line)
    partition, free = (int(a) for a in address)
    if partition + tensor.parts > PARTITION_LIMIT:
        raise CompileError(f'nl.ndarray(address={address!r}): {tensor.parts} partitions from partition {partition} '
                           f'run past partition {PARTITION_LIMIT}', line)
    nblocks = int(np.prod(tensor.shape[:tensor.nblock], dtype=np.int64))
    size = nblocks * tensor.free * tensor.kind.itemsize
    limit = _PARTITION_BYTES[tensor.buffer.name]
    if free + size > limit:
        raise CompileError(f'nl.ndarray(address={address!r}): {size} bytes per partition from byte {free} run past '
                           f'the {limit} bytes of a {tensor.buffer.name.upper()} partition', line)
    return partition, free


def _place(run: Any, tensor: Tensor, placed: Placement, initialized: bool, line: int) -> None:
    """Track a tensor the kernel placed itself (nki_sim/placement.py); an initialized one (nl.zeros, ...) is
    written at its declaration, an nl.ndarray is not."""
    if run.placed is None:
        run.placed = PlacedMemory()
    run.placed.place(tensor, placed)
    if initialized:
        for block in np.ndindex(*tensor.shape[:tensor.nblock]):
            run.placed.write(tensor, block, (0, tensor.parts, 0, tensor.free), line)


def ndarray(shape: Any, dtype: Any, buffer: Any = None, name: Any = '', address: Any = None) -> Any:
    tensor = _declare(shape, dtype, buffer, name, 0, initialized=False)
    if address is not None:
        run = runtime.current()
        line = run.line()
        partition, byte = _check_address(address, tensor, line)
        _place(run, tensor, at_address(tensor.buffer, partition, byte, tuple(tensor.shape[:tensor.nblock])), False,
               line)
    return tensor


def zeros(shape: Any, dtype: Any, buffer: Any = None, name: Any = '', lazy_initialization: Any = False,
          **kwargs: Any) -> Any:
    return _declare(shape, dtype, buffer, name, 0)


def ones(shape: Any, dtype: Any, buffer: Any = None, name: Any = '', lazy_initialization: Any = False,
         **kwargs: Any) -> Any:
    return _declare(shape, dtype, buffer, name, 1)


def full(shape: Any, fill_value: Any, dtype: Any, buffer: Any = None, name: Any = '', lazy_initialization: Any = False,
         **kwargs: Any) -> Any:
    return _declare(shape, dtype, buffer, name, fill_value)


def zeros_like(a: Any, dtype: Any = None, buffer: Any = None, name: Any = '', **kwargs: Any) -> Any:
    return _declare(a.shape, dtype or a.dtype, buffer or a.buffer, name, 0)


def empty_like(a: Any, dtype: Any = None, buffer: Any = None, name: Any = '', **kwargs: Any) -> Any:
    return zeros_like(a, dtype, buffer, name)


ndarray_like = empty_like


def shared_constant(constant: Any, dtype: Any = None, **kwargs: Any) -> Any:
    run = runtime.current()
    if dtype is None:
        return hbm_tensor(np.asarray(constant), memory.constant_hbm, run.line(), 'constant')
    # the constant in its declared format: converted and rounded as a write of those values is (nl.bfloat16 0.1 is
    # 0.10009765625; an fp8 e4m3 constant saturates at 240)
    kind = kind_of(dtype)
    values = np.asarray(constant)
    array = np.empty(values.shape, kind.storage)
    write_in_format(array, values, kind)
    return hbm_tensor(array, memory.constant_hbm, run.line(), 'constant', dtype=dtype)


# ----- DMA -----
def _oob_mode(mode: Any) -> str:
    """`mode=` of nl.load: nisa.oob_mode.error (the default) or nisa.oob_mode.skip (also spelled as the strings)."""
    if mode is None:
        return 'error'
    if mode in ('error', 'skip'):
        return str(mode)
    raise CompileError(f'nl.load: mode={mode!r} is not an oob_mode (oob_mode.error or oob_mode.skip)')


def _mask_digest(where: Any) -> Any:
    """An elementwise mask as part of a load's reuse key: two loads of one region under different masks move
    different elements (before, the second of two complementary triangles was a free repeat of the first)."""
    if where is None:
        return None
    where = np.ascontiguousarray(where, dtype=bool)
    return where.shape, hashlib.blake2b(where.tobytes(), digest_size=16).digest()


def load(src: Any, dtype: Any = None, mask: Any = None, mode: Any = None, **kwargs: Any) -> Any:
    run = begin()
    oob = _oob_mode(mode)
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
        try:
            result = _to_storage(view.array(window), kind.storage)
        except IndexError as error:
            if oob == 'skip' and isinstance(view, IndirectView):
                raise CompileError(f'nl.load mode=oob_mode.skip: {error}; skipping out-of-bounds rows of a gather '
                                   '(leaving them unwritten) is not modelled') from error
            raise
    if isinstance(view, IndirectView):        # a gather: the DMA also reads the index tile; never a reuse
        pending = issue(run, 'load', 'dma', [(view, window), (view.index, None)], shape, kind, result, window)
        pending.where = where
        pending.dma = 'load'
        return pending.tile
    pending = issue(run, 'load', 'dma', [(view, window)], shape, kind, result, window)
    pending.where = where
    pending.dma = 'load'
    # Reuse (cse=1, no DMA; docs/simulator.md "Data reuse"): a repeat in the same loop body, or in another
    # iteration of the innermost enclosing loop only (the compiler hoists a load invariant in its innermost loop;
    # it does not keep tiles across iterations of outer loops, which is why hoisting loads by hand pays in the NKI
    # matmul tutorial).
    pending.value_key = ('load', view.alloc.serial, view.alloc.version, view.offset, view.shape, view.strides,
                         kind.public, window, _mask_digest(where))
    pending.cse_key = pending.value_key + (run.reuse_scope,)
    return pending.tile


def load_transpose2d(src: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """src[i, j] into tile[j, i]. A mask is a predicate over the source's index expressions (the boundary mask of
    a ragged edge, `mask=(r + i_p < rows) & (c + i_f < cols)`): it selects source elements, and the tile elements
    they land on, the window transposed; the others are not written."""
    run = begin()
    view = operand(src)
    if view.tensor.buffer.on_chip or len(view.shape) != 2:
        raise CompileError('nl.load_transpose2d reads a 2-D HBM tensor')
    window, where = _mask(mask, view.shape)
    if not view.in_bounds:
        view.clip(window)
    transposed = View(view.tensor, view.block, view.offset, view.shape[::-1], view.strides[::-1])
    if transposed.shape[0] > PARTITION_LIMIT:
        raise CompileError(f'nl.load_transpose2d: partition dimension {transposed.shape[0]} exceeds '
                           f'{PARTITION_LIMIT}')
    window = None if window is None else window[::-1]
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind
    result = _to_storage(transposed.array(window), kind.storage) if run.numerics else None
    pending = issue(run, 'load', 'dma', [(transposed, window)], transposed.shape, kind, result, window)
    pending.where = None if where is None else where.T
    pending.dma = 'load'
    return pending.tile


def store(dst: Any, value: Any, mask: Any = None, **kwargs: Any) -> None:
    begin()
    target = destination(operand(dst), dma=True)
    if target.tensor.buffer.on_chip:
        raise CompileError('nl.store writes HBM; assign to on-chip tiles instead')
    if isinstance(value, (bool, int, float, np.number)):
        # a scalar value fills the destination (`nl.store(dst=buf[:, i], value=0.0)`): an SBUF tile of the
        # destination's shape and format set to it, then stored
        value = full(target.shape, value, dtype=target.tensor.dtype, buffer=memory.sbuf)
    compute.store_tile(target, value, mask)


def atomic_rmw(dst: Any, value: Any, op: Any, mask: Any = None, **kwargs: Any) -> None:
    """dst = op(dst, value) on HBM, element by element even where an indirect access repeats a row (the DMA
    engines' atomic read-modify-write). An associative reduction: iterations of an affine_range loop may update
    the same rows (the affine_range page: associative reductions are not loop-carried dependencies)."""
    run = begin()
    target = destination(operand(dst))
    if target.tensor.buffer.on_chip:
        raise CompileError('nl.atomic_rmw updates HBM (dst is an HBM tensor, usually indexed with a tile of indices)')
    combine = alu(op)
    source = operand(value) if isinstance(value, (Tensor, View)) else None
    window, where = _mask(mask, target.shape)
    if where is not None:
        raise CompileError('nl.atomic_rmw: the mask must be a box (per-axis bounds)')
    if run.numerics:
        values = source.array(window) if source is not None else value
        if isinstance(target, IndirectView):
            target.combine(combine, np.broadcast_to(values, window_shape(window, target.shape)), window)
        else:
            out = target.array(window)
            write_in_format(out, combine(out, values), target.tensor.kind)
    reads = ([(source, window)] if source is not None else []) + [(target, window)] + \
        ([(target.index, None)] if isinstance(target, IndirectView) else [])
    pending = runtime.Pending('store', 'dma', run.line(), reads, None, None, window)
    pending.dma = 'store'
    pending.accumulating = True
    runtime.direct(run, pending, target, window)


def rms_norm(x: Any, w: Any, axis: Any, n: Any, epsilon: Any = 1e-6, dtype: Any = None, compute_dtype: Any = None,
             mask: Any = None, **kwargs: Any) -> Any:
    """x / sqrt(sum(x^2 along axis) / n + epsilon) * w."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if 0 in axes:
        raise CompileError('nl.rms_norm: the simulator normalises along free axes only (not the partition axis)')
    count = float(n)

    def normalised(values, weight):
        scale = 1.0 / np.sqrt(np.sum(values * values, axis=axes, keepdims=True) / count + epsilon)
        return values * scale * weight
    return elementwise('activation', 'act', normalised, (x, w), dtype or compute_dtype, mask)


# ----- elementwise -----


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x * x * x)))


def _erf(x):
    """erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, under fp32 rounding of the result)."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


def _gelu_dx(x):
    return 0.5 * (1.0 + _erf(x * np.float32(0.7071067811865476))) + x * np.exp(-0.5 * x * x) * \
        np.float32(0.3989422804014327)


def _silu_dx(x):
    s = _sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def _gelu_sigmoid(x):
    return x * _sigmoid(np.float32(1.702) * x)


def _gelu_sigmoid_dx(x):
    s = _sigmoid(np.float32(1.702) * x)
    return s + np.float32(1.702) * x * s * (1.0 - s)


_UNARY = {
    'exp': np.exp, 'log': np.log, 'sqrt': np.sqrt, 'rsqrt': lambda x: 1.0 / np.sqrt(x),
    'square': np.square, 'abs': np.abs, 'negative': np.negative, 'tanh': np.tanh, 'sin': np.sin,
    'cos': np.cos, 'arctan': np.arctan, 'sign': np.sign, 'floor': np.floor, 'ceil': np.ceil,
    'trunc': np.trunc, 'reciprocal': lambda x: 1.0 / x, 'sigmoid': _sigmoid,
    'relu': lambda x: np.maximum(x, 0), 'silu': lambda x: x * _sigmoid(x), 'gelu': _gelu,
    'gelu_apprx_tanh': _gelu_tanh, 'softplus': lambda x: np.log1p(np.exp(x)),
    'erf': _erf, 'erf_dx': lambda x: np.float32(1.1283791670955126) * np.exp(-x * x), 'tan': np.tan,
    'mish': lambda x: x * np.tanh(np.log1p(np.exp(x))), 'silu_dx': _silu_dx, 'gelu_dx': _gelu_dx,
    'gelu_apprx_sigmoid': _gelu_sigmoid, 'gelu_apprx_sigmoid_dx': _gelu_sigmoid_dx,
    'invert': np.invert, 'logical_not': np.logical_not,
}


def bypass(x: Any, y: Any = None, **kwargs: Any) -> Any:
    """nl.bypass names "no operation" in nisa.activate2's tensor-scalar stage (op0=/op1=); it computes nothing."""
    raise CompileError('nl.bypass is an operator argument (nisa.activate2 op0=/op1=: no tensor-scalar operation), '
                       'not an instruction')


bypass.alu = BYPASS     # type: ignore[attr-defined]


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


def softmax(x: Any, axis: Any, dtype: Any = None, compute_dtype: Any = None, mask: Any = None,
            **kwargs: Any) -> Any:
    """exp(x - max) / sum(exp(x - max)) along the free axis (or axes) `axis`, one activation instruction (as the
    compiler lowers it: exp with the row max as bias and the row sum accumulated)."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if 0 in axes:
        raise CompileError('nl.softmax: axis 0 is the partition axis; the axis (or axes) "must be free dimensions, '
                           'not partition dimension (0)" (nki.language.softmax)')

    def normalised(values):
        shifted = np.exp(values - values.max(axis=axes, keepdims=True))
        return shifted / shifted.sum(axis=axes, keepdims=True)
    return elementwise('activation', 'act', normalised, (x,), dtype, mask)


def dropout(x: Any, rate: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """Zeroes elements with probability `rate` (no rescaling). Only the deterministic rates run: 0 keeps x, 1
    zeroes it; a random drop cannot be checked against a reference."""
    return deterministic_dropout('nl.dropout', x, rate, dtype, mask)


def where(condition: Any, x: Any, y: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    if isinstance(condition, Predicate):
        condition = _predicate_tile(condition, (x, y))
    return elementwise('select', 'auto', np.where, (condition, x, y), dtype, mask)


def _predicate_tile(predicate: Predicate, values: Any) -> Any:
    """A comparison of index expressions (`i_p < n`) as the condition of nl.where: a uint8 tile of the
    predicate over the values' shape, made by one iota instruction (as nisa.iota materialises an index
    expression), then selected on like any condition tile."""
    views = [operand(v) for v in values if isinstance(v, (Tensor, View))]
    if not views:
        raise CompileError('nl.where: a mask predicate as condition needs a tile among x and y (its shape)')
    shape = broadcast_shape(views)
    run = begin()
    kind = kind_of(np.uint8)
    result = predicate.evaluate(shape).astype(kind.storage) if run.numerics else None
    return issue(run, 'iota', 'pool', [], shape, kind, result).tile


# ----- reductions -----
def _reduction(name, ufunc, mean=False):
    def operation(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
        return reduce(ufunc, x, axis, dtype, mask, keepdims, mean=mean)
    operation.__name__ = name
    operation.alu = ufunc
    return operation


sum = _reduction('sum', np.add)
max = _reduction('max', np.maximum)
min = _reduction('min', np.minimum)
prod = _reduction('prod', np.multiply)
mean = _reduction('mean', np.add, mean=True)
all = _reduction('all', np.logical_and)


def var(x: Any, axis: Any, dtype: Any = None, mask: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The population variance along the free axis (or axes) `axis` (as numpy.var), one tensor_reduce."""
    return reduce(np.add, x, axis, dtype, mask, keepdims, variance=True)


def loop_reduce(x: Any, op: Any, loop_indices: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """Assigned to dst: at the first iteration of all `loop_indices` dst = x, later dst = op(dst, x)."""
    run = begin()
    view = on_chip(operand(x), 'nl.loop_reduce')
    kind = result_kind(dtype, [view])
    window, where = _mask(mask, view.shape)
    result = _to_storage(view.array(window), kind.storage) if run.numerics else None
    pending = issue(run, 'loop_reduce', 'auto', [(view, window)], view.shape, kind, result, window)
    pending.where = where
    pending.combine = alu(op)
    pending.alu = _alu_name(pending.combine)
    pending.first = all_first(loop_indices)
    pending.accumulating = True
    return pending.tile


def all_first(indices: Any) -> Any:
    for index in indices:
        if not is_first_iteration(index):
            return False
    return True


def expand_dims(data: Any, axis: Any, **kwargs: Any) -> Any:
    """A view of data with a unit free axis inserted at `axis` (no instruction)."""
    return compute.expand_dims_view(data, axis)


def gather_flattened(data: Any, indices: Any, axis: Any = 0, dtype: Any = None, mask: Any = None,
                     **kwargs: Any) -> Any:
    """Within each partition, out[p, j] = data[p, indices[p, j]] over data's flattened free elements. The Beta 2
    page's `axis` (default 0) has no further documented meaning; any other value is refused."""
    if axis != 0:
        raise CompileError(f'nl.gather_flattened: axis={axis!r} is not modelled (the API page documents the gather '
                           'within each partition over its flattened free elements, axis=0)')
    unapplied_mask('nl.gather_flattened', mask)
    return isa.nc_n_gather(data=data, indices=indices, dtype=dtype)


def shared_identity_matrix(n: Any, dtype: Any = np.uint8, **kwargs: Any) -> Any:
    """An n x n identity tile in SBUF (generated on the GpSimd engine)."""
    run = begin()
    size = int(n)
    if size > PARTITION_LIMIT:
        raise CompileError(f'nl.shared_identity_matrix: {size} partitions (at most {PARTITION_LIMIT})')
    kind = kind_of(dtype)
    result = np.eye(size, dtype=kind.storage) if run.numerics else None
    return issue(run, 'iota', 'pool', [], (size, size), kind, result).tile


# ----- transposes and matmul -----
def transpose(x: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """x.T; unlike nisa.nc_transpose the result may be assigned to SBUF (the compiler adds the copy)."""
    tile = isa.nc_transpose(x, engine=None, mask=mask)
    tile.pending.psum_only = False
    return isa._cast_result(tile, dtype)


def matmul(x: Any, y: Any, transpose_x: Any = False, mask: Any = None, **kwargs: Any) -> Any:
    """x @ y. Without transpose_x the compiler inserts a PE transpose of x and a PSUM->SBUF copy."""
    stationary = x
    if not transpose_x:
        view = operand(x)
        if view.shape[0] > 128 or free_elements(view) > 128:
            raise CompileError(f'nl.matmul: x of shape {view.shape} exceeds the 128x128 stationary tile')
        stationary = copy(isa.pe_transpose(view))
    return isa.nc_matmul(stationary, y, mask=mask)


# ----- NKI memory keywords (Beta 2) -----
class MemoryKeyword:
    """The names `sbuf`, `psum` and `hbm` that the NKI compiler (Beta 2, `import nki`) provides in every kernel
    without an import: `sbuf.view(dtype, shape)` declares a tensor there, as nl.ndarray(shape, dtype, buffer=sbuf)
    does (the NKI quickstart's form; the compiler's own nl.ndarray is written as `buffer.view(dtype, shape, name)`).
    The protocol binds them in Beta 2 kernel modules only (protocol/kernel_source.py)."""
    __slots__ = ('buffer',)

    def __init__(self, buffer: Any) -> None:
        self.buffer = buffer

    def view(self, dtype: Any, shape: Any, name: Any = '') -> Any:
        return ndarray(shape, dtype, buffer=self.buffer, name=name)

    def __repr__(self) -> str:
        return self.buffer.name


MEMORY_KEYWORDS = {'sbuf': MemoryKeyword(memory.sbuf), 'psum': MemoryKeyword(memory.psum),
                   'hbm': MemoryKeyword(memory.hbm)}


# Keyword checking and dst= on every public nl function (nki_sim/call_forms.py). Functions that compute Python
# values for the kernel (ids, shapes) and the execution helpers nisa shares are left as they are.
check_module('nl', globals(), (__name__, compute.__name__), dst_first=False, skip=frozenset({
    'finfo', 'iinfo', 'static_cast', 'program_id', 'num_programs', 'program_ndim', 'spmd_dim', 'nc', 'device_print',
    'all_first', 'elementwise', 'reduce', 'full_tile', 'reshape_view', 'element_count', 'free_elements',
    'deterministic_dropout'}))


def __getattr__(name: str) -> Any:
    missing_api('nl', name, globals())
