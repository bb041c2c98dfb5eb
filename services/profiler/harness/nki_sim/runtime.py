"""The active simulation run and the life cycle of an instruction.

An ISA call computes its result (numerics mode) and returns a *pending* tile. The next thing that happens
decides where the result lives: `dst[...] = tile` (or `psum[...] += matmul`) binds it to that destination, so the
instruction writes there directly, as on hardware; anything else (another instruction, indexing the tile, kernel
end) flushes it into an anonymous tile allocation. Only then is the instruction recorded in the trace, so each
`I` record names its real output region. Instructions that name their destination themselves (store, dma_copy)
are recorded immediately.
"""
import sys
from types import FrameType
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import memory, target
from .affine import Affine, index_as_value
from .dtypes import Kind, kind_of, to_storage
from .errors import CompileError
from .indirect import DynamicRunsView, DynamicView, GatherTransposeView, IndirectView, gather_transpose_refusal
from .tensors import PARTITION_LIMIT, UNINITIALIZED, Tensor
from .views import OutOfRangePattern, View, destination, operand_window

RUN: Optional["Run"] = None


def current() -> 'Run':
    if RUN is None:
        raise CompileError('NKI APIs can only be used inside a kernel being simulated (call it through nki.jit)')
    return RUN


class SpmdSize(int):
    """A launch-grid size whose programs are spread over `cores` NeuronCores (`nl.nc(n)`, `nl.spmd_dim(g, nl.nc(n))`):
    program i of that grid axis runs on core i mod cores."""
    cores: int

    def __new__(cls, value: int, cores: int) -> 'SpmdSize':
        size = super().__new__(cls, value)
        size.cores = cores
        return size


class Run:
    """State of one kernel execution: numerics on/off, the trace, loop context, SPMD ids, the pending result."""

    def __init__(self, kernel_file, recorder, numerics):
        self.kernel_file = kernel_file
        self.recorder = recorder
        self.numerics = numerics
        self.pending = None
        self.affine_context = ()
        self.loop_counter = 0
        self.program_ids = ()
        self.grid = ()
        self.core_split: Any = None   # (grid axis, cores) of a launch spread over NeuronCores, else None
        self.shared_outputs = []
        # shared_hbm tensors by name, in order of declaration, and each (program ids, name)'s declarations so far
        # (language._named_shared)
        self.shared_names: Dict[str, List[Any]] = {}
        self.shared_name_counts: Dict[Tuple[Any, str], int] = {}
        self.private_hbm: List[Any] = []    # nl.hbm / nl.private_hbm tensors this run declared (may be returned)
        self.shared_ordinal = 0
        self.identity_cache = {}      # is this moving operand an identity matrix? (PE transposes)
        self.accumulator = None       # ACT/DVE reduction registers (activation/tensor_scalar reduce_res)
        self.fixed_line = None        # replay: the kernel line of the program call being executed
        self.line_cache: Dict[Tuple[Any, int], int] = {}     # line(): kernel line by (code, instruction offset)
        self.coverage = None          # replay: {HBM alloc serial: bool array of elements written by an instruction}
        self.observer: Any = None     # jit.RunObserver of the run (program recording)
        self.loop_serial = 0          # loops entered so far (any kind)
        self.loop_path: Tuple[Any, ...] = ()    # ((loop, index), ...) of the enclosing loops, outermost first
        self.reuse_scope: Any = ()    # loop_path with the innermost loop's index dropped (load reuse, nl.load)
        self.beta2 = False            # the kernel is written against the `nki` namespace (Beta 2 call forms)
        # nisa.tensor_tensor on int32/uint32 tiles defaults to GpSimd's native integer arithmetic (the NKI 2.31+
        # pages, Beta 2 kernels; the replay knows a Beta 2 program by its header's `beta2`)
        self.integer_gpsimd = False
        self.placed: Any = None       # tensors the kernel placed itself (placement.PlacedMemory), once there is one
        self.races: Any = None        # replay of a multi-program launch grid: races.WriteRaces of its HBM writes

    def enter_program(self, ids: Tuple[int, ...]) -> None:
        """Program `ids` of the current grid starts: its instructions and allocations are traced on its core. An
        nl.nc(2) launch spreads over the physical cores of a logical core: two on trn2, one on trn1 (LNC=1 only),
        where its programs run one after another as those of kernel[2] do."""
        self.program_ids = ids
        split = self.core_split
        cores = min(split[1], target.logical_core_size()) if split is not None and split[0] < len(ids) else 1
        self.recorder.core = ids[split[0]] % cores if cores > 1 else 0

    def line(self, skip: int = 0) -> int:
        """Kernel source line of the innermost kernel frame on the stack (0 if none), not looking at the `skip`
        innermost frames of the caller (which are never kernel frames)."""
        if self.fixed_line is not None:
            return self.fixed_line
        frame: Optional[FrameType] = sys._getframe(1 + skip)
        kernel_file = self.kernel_file
        while frame is not None:
            code = frame.f_code
            if code.co_filename == kernel_file:
                # f_lineno decodes the code's line table up to the current instruction (slow in a long kernel
                # function): the line of an instruction offset is memoised
                key = (code, frame.f_lasti)
                line = self.line_cache.get(key)
                if line is None:
                    line = self.line_cache[key] = frame.f_lineno
                return line
            frame = frame.f_back
        return 0

    def new_loop(self) -> int:
        self.loop_counter += 1
        return self.loop_counter


class Pending:
    """An executed instruction whose output location is not decided yet."""
    __slots__ = ('op', 'eng', 'line', 'reads', 'consts', 'n', 'nstat', 'p', 'tile', 'result', 'window', 'where',
                 'cse_key', 'value_key', 'combine', 'first', 'accumulating', 'extra_writes', 'dma', 'psum_only',
                 'window_free', 'folds', 'dynamic', 'runs', 'rmw', 'alu', 'element_runs', 'reduces')

    def __init__(self, op, eng, line, reads, tile, result, window):
        self.op = op
        self.eng = eng
        self.line = line
        self.reads = reads
        self.tile = tile
        self.result = result
        self.window = window
        self.consts = 0
        self.n = None
        self.nstat = 0
        self.p = None
        self.where = None
        self.cse_key = None
        self.value_key = None        # a load: what it reads (HBM region and version), wherever it lands
        self.combine = None
        self.first = True
        self.accumulating = False
        self.extra_writes = ()
        self.dma = None
        self.psum_only = False
        self.window_free = False
        self.folds = ()               # (view, window) operands of an associative op: written in place, a reduction
        self.dynamic = False          # an operand sits at an offset read from SBUF when it runs (trace `dyn=1`)
        self.runs = None              # a DynamicRunsView operand: one traced copy per offset of its index tile
        self.rmw = False              # a DMA that adds into its destination (dst_rmw_op, dma_compute into a source)
        self.alu = ''                 # a tensor_tensor's ALU operators (trace `alu`; two for scalar_tensor_tensor)
        self.element_runs = False     # a DMA that moves one element per descriptor (trn1's transposing DMAs)
        self.reduces = False          # also reduces into the accumulation registers (trace `red`; so does a reduce_res)


def begin() -> 'Run':
    """Entry of every API call that issues an instruction: settle the previous pending result."""
    run = current()
    if run.pending is not None:
        _flush(run)
    return run


def flush() -> None:
    if RUN is not None and RUN.pending is not None:
        _flush(RUN)


DYNAMIC_ONLY = ('a tile indexed at a dynamic offset (an index read from SBUF) is the source of '
                'nisa.tensor_copy_dynamic_src or the destination of nisa.tensor_copy_dynamic_dst only')
PATTERN_ONLY = ('an .ap(scalar_offset=...) access of an SBUF/PSUM tensor (a dynamic offset read from SBUF) is the '
                'source or destination of nisa.tensor_copy or nisa.dma_copy (or of the dynamic copies) only: the '
                'NKI pages describe no other instruction taking a dynamic on-chip access')


def dynamic_refusal(view: DynamicView) -> str:
    return PATTERN_ONLY if view.pattern else DYNAMIC_ONLY


def operand(value: Any) -> View:
    """A tile-valued argument as a View."""
    if isinstance(value, View):
        if isinstance(value, DynamicView) and not value.allowed:
            raise CompileError(dynamic_refusal(value))
        if isinstance(value, GatherTransposeView) and not value.allowed:
            raise CompileError(gather_transpose_refusal(value))
        return value
    if isinstance(value, Tensor):
        return value.view()
    if isinstance(value, OutOfRangePattern):
        raise CompileError(value.message)
    if isinstance(value, Affine):
        return index_values(value)
    why = index_as_value(value)
    if why is not None:
        raise CompileError(why)
    raise CompileError(f'expected a tile, got {type(value).__name__}')


def issue_iota(run: 'Run', expr: Affine, kind: Kind) -> 'Pending':
    """One iota instruction writing the values of `expr` (a 1-D nl.arange is a column: [n, 1]; an expression over
    one nl.mgrid spans the grid's full shape), as nisa.iota(expr, dtype) issues it."""
    shape = expr.dense_shape if expr.ndim >= 2 else expr.shape + (1,)
    result = np.broadcast_to(expr.evaluate(), shape).astype(kind.storage) if run.numerics else None
    return issue(run, 'iota', 'pool', [], shape, kind, result)


def index_values(expr: Affine) -> View:
    """An index expression used as a tile's values (`t + i_f` of a float tile and an nl.mgrid component,
    `nl.broadcast_to(nl.arange(n)[None, :], (p, n))`): an int32 tile of its values, made by one iota
    instruction before the instruction that reads it. No NKI page documents the form; a public author records it
    compiled and exact on a trn2, which fits a compiler that materialises the expression as nisa.iota does."""
    run = begin()
    tile = issue_iota(run, expr, kind_of(np.int32)).tile
    _flush(run)
    return tile.view()


def issue(run: Run, op: str, eng: str, reads: List[Tuple[View, Any]], out_shape: Tuple[int, ...], kind: Kind,
          result: Optional[np.ndarray], window: Any = None, out_buffer: memory.Buffer = memory.sbuf,
          line: Optional[int] = None) -> 'Pending':
    """Create the pending result of an instruction (its `tile` is what the API call returns)."""
    line = run.line() if line is None else line
    for view, read_window in reads:
        if not view.in_bounds:
            view.clip(read_window)
    tile = Tensor.tile(out_buffer, kind, out_shape, line, run.numerics)
    pending = Pending(op, eng, line, reads, tile, result, window)
    tile.pending = pending
    run.pending = pending
    return pending


def _flush(run):
    pending = run.pending
    run.pending = None
    tile = pending.tile
    tile.pending = None
    if (pending.window is not None or pending.where is not None) and not tile.blocks:
        # a masked instruction's new tile (`t = nl.load(x[i_p, i_f], mask=i_p < n)`): its masked-off elements are
        # never written, stale SBUF on the device like a declared tile's ("Uninitialized memory"), not zeros
        tile.init = UNINITIALIZED
    _store(run, pending, tile.view(), accumulate=False)


def _store(run, pending, dst, accumulate):
    window = pending.window
    if run.numerics and pending.result is not None and not _adopted(pending, dst, accumulate):
        target = dst.array(window)
        result = pending.result
        if result.shape != target.shape:
            result = result.reshape(target.shape)
        fresh = _fresh_psum(dst, window)        # uninitialized PSUM: the elements no instruction wrote yet
        first = None if fresh is None else fresh if pending.where is None else fresh & pending.where
        if first is not None and accumulate and pending.eng == 'pe':    # starts a matmul accumulation group there
            np.copyto(target, result, where=first)
            np.add(target, result, out=target, where=~fresh if pending.where is None else pending.where & ~fresh)
        elif accumulate:
            if pending.where is not None:
                np.add(target, result, out=target, where=pending.where)
            else:
                np.add(target, result, out=target)
        elif pending.combine is not None and not pending.first:
            pending.combine(target, result, out=target)
        else:
            if target.dtype.kind in 'iu' and result.dtype.kind == 'f':
                # a float result assigned to an integer tile (`idx_u8[...] = nl.subtract(x, 9)`) saturates, as every
                # other float-to-integer write does (numpy's cast wraps or is undefined out of range)
                result = to_storage(result, target.dtype)
            if pending.where is not None:
                np.copyto(target, result, where=pending.where)
            else:
                target[...] = result
        if first is not None:
            fresh[first] = False
        rounding = dst.tensor.kind.rounding
        if rounding is not None:
            rounding(target)
        if type(dst) is DynamicRunsView:        # target is the gathered copy: write it back
            dst.scatter_over(dst.storage(), target, window)
    reads = list(pending.reads)
    if accumulate or (pending.combine is not None and not pending.first):
        reads.append((dst, window))
    if pending.folds and _folds_into(pending.folds, dst, window):
        pending.accumulating = True
    record(run, pending, reads, [(dst, window)], accumulate)


def _fresh_psum(dst, window):
    """The never-written mask of the elements a write of uninitialized PSUM reaches (a view into its allocation's
    `fresh` array), or None."""
    tensor = dst.tensor
    if tensor.buffer is not memory.psum or tensor.source is not None or type(dst) is not View:
        return None
    alloc = tensor.blocks.get(dst.block) if tensor.blocks is not None else None
    if alloc is None or alloc.fresh is None:
        return None
    return dst.array_over(alloc.fresh, window)


def _folds_into(folds, dst, window):
    """Is the destination one of the operands of an associative op, element for element (`acc = max(acc, x)`)?
    Such an in-place fold is an associative reduction, which an affine_range loop may carry."""
    place = dst.clip(window)
    for view, w in folds:
        if view.tensor is dst.tensor and view.block == dst.block and view.strides == dst.strides \
                and view.clip(w) == place:
            return True
    return False


def _adopted(pending, dst, accumulate):
    """Make a freshly computed result the storage of a whole, not yet allocated destination block (no zero
    fill, no copy). Only for plain overwrites of an array that owns its memory."""
    result = pending.result
    if accumulate or pending.window is not None or pending.where is not None or pending.combine is not None \
            and not pending.first or result.base is not None or not result.flags.c_contiguous \
            or isinstance(dst, IndirectView):
        return False
    tensor = dst.tensor
    if tensor.hbm_alloc is not None or dst.block in tensor.blocks or dst.offset != 0 \
            or result.dtype != tensor.kind.storage or tensor.kind.rounding is not None:
        return False
    if result.size != tensor.parts * tensor.free or dst.shape[0] != tensor.parts or not _row_major(dst):
        return False
    tensor.adopt(dst.block, result.reshape(-1))
    return True


def _row_major(view):
    expected = 1
    for size, stride in zip(reversed(view.shape), reversed(view.strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def check_accumulation_format(op: str, dst: View, line: Any = None) -> None:
    """A PE result accumulated into PSUM: "the matmul accumulation and results are always in float32"
    (nki.isa.nc_matmul). An accumulation into an integer PSUM tile is refused rather than given a meaning."""
    public = dst.tensor.kind.public
    if isinstance(public, np.dtype) and public.kind in 'iub':
        message = (f'a {op} result is accumulated into a PSUM tile of {public.name}: "the matmul accumulation and '
                   'results are always in float32" (nki.isa.nc_matmul); the simulator does not model an '
                   'accumulation in another format (declare the PSUM tile float32)')
        raise CompileError(message, line) if line is not None else CompileError(message)


def bind(run: Run, pending: 'Pending', dst: View, accumulate: bool) -> None:
    destination(dst)
    if isinstance(dst, DynamicView) and not dst.allowed:
        raise CompileError(dynamic_refusal(dst), pending.line)
    if not dst.tensor.buffer.on_chip:
        raise CompileError('a compute instruction writes SBUF or PSUM, not HBM: store its tile with nl.store or '
                           'nisa.dma_copy', pending.line)
    run.pending = None
    tile = pending.tile
    tile.pending = None
    if dst.shape != tile.shape:
        if pending.runs is not None:
            raise CompileError(f'a copy at a tile of dynamic offsets is assigned to a destination of its own shape '
                               f'{tile.shape}, not {dst.shape}', pending.line)
        if _elements(dst.shape) != _elements(tile.shape) or dst.shape[0] != tile.shape[0]:
            raise CompileError(f'shape mismatch: cannot assign a tile of shape {tile.shape} '
                               f'to a destination of shape {dst.shape}', pending.line)
        if pending.window is not None or pending.where is not None:
            raise CompileError('a masked result must be assigned to a destination of the same shape', pending.line)
    if not dst.in_bounds and pending.where is None:
        # a destination past its tile's end (`t[0:64, 0:96]` of a 64-column t) is refused at this line, not when
        # the instruction is flushed, after a later line's error (as direct() for DMAs; an elementwise mask's
        # destination is checked where the mask holds, by the numerics)
        dst.clip(pending.window)
    if pending.psum_only and dst.tensor.buffer is not memory.psum:
        raise CompileError(f'{pending.op} writes its result to PSUM; the destination is in '
                           f'{dst.tensor.buffer.name}', pending.line)
    if accumulate:
        check_accumulation_format(pending.op, dst, pending.line)
        pending.accumulating = True
    tile.alias = dst
    _store(run, pending, dst, accumulate)


def _elements(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class Operand:
    """What a trace record needs of one operand, a view under a window in its allocation: `region` (View.region),
    `token` (the trace's `buffer:bytes per partition`), the clipped shape's `parts` and `free` elements per
    partition, `start_allowed` (an engine may access those partitions), `run` (bytes in the innermost contiguous
    run, the DMA descriptor size) and `step` (bytes of the innermost step of an on-chip View, else 0)."""
    __slots__ = ('region', 'token', 'free', 'parts', 'start_allowed', 'run', 'step', 'itemsize')

    def __init__(self, view, window, alloc):
        tensor = view.tensor
        source = tensor.source
        if source is None:
            region = view.region(window, alloc.free)
        else:   # a bitcast to another element size: the region in the view's elements, then in the allocation's
            p0, p1, f0, f1, box = view.region(window, tensor.free)
            new, old = tensor.kind.itemsize, source.kind.itemsize
            region = p0, p1, f0 * new // old, -(-f1 * new // old), box
        _, shape = view.clip(window)
        itemsize = tensor.kind.itemsize
        on_chip = tensor.buffer.on_chip
        per_partition = 1
        step = 0
        for n, s in zip(shape[1:], view.strides[1:]):
            if s:
                per_partition *= n
        if on_chip and type(view) is View:
            for axis in range(len(shape) - 1, 0, -1):
                if shape[axis] > 1:
                    step = abs(view.strides[axis]) * itemsize
                    break
        self.region = region
        self.token = f'{tensor.buffer.trace_name}:{per_partition * itemsize}'
        self.free = _elements(shape[1:])
        self.parts = shape[0]
        self.start_allowed = not on_chip or _start_partition_allowed(region[0], region[1])
        self.run = view.contiguous_run(window) * itemsize
        self.step = step
        self.itemsize = itemsize

    @property
    def partition_bytes(self):
        """Bytes per partition of the operand (a written tile's free elements times the element size)."""
        return self.free * self.itemsize

    @property
    def bytes(self):
        """Bytes of the operand (what a DMA of it moves)."""
        return self.parts * self.free * self.itemsize


_OPERANDS: Dict[tuple, Operand] = {}


def _operand(view, window, recorder):
    """(alloc, Operand) of an instruction operand; memoised by geometry, because the same block-relative access
    repeats across blocks and iterations (on chip) and a loop's loads and stores repeat the same HBM regions (HBM:
    the key has the index map when the region has an index box, View.region), and on a plain View for its last
    window (a replay's view of a run value, and a tile's whole view, are the same object at every use)."""
    tensor = view.tensor
    alloc = tensor.hbm_alloc
    if alloc is None:
        alloc = tensor.blocks.get(view.block) or tensor.alloc_for(view.block)
    if (alloc.freed or alloc.id < 0 and alloc.buffer.on_chip) and recorder.traced:
        recorder.touch(alloc)   # (an HBM allocation has no trace id; Untraced.touch does nothing)
    if type(view) is View:
        memo = view.memo
        if memo is not None and memo[0] is alloc and (memo[1] is window or memo[1] == window):
            return alloc, memo[2]
    elif type(view) is DynamicView:
        return alloc, Operand(view, window, alloc)
    if tensor.source is not None or not view.in_bounds:     # a bitcast to another element size; a deferred check
        return alloc, Operand(view, window, alloc)
    # (the view's class: an indirect view's region is its whole allocation, and only a plain View has a step)
    buffer = tensor.buffer
    if buffer.on_chip:
        key = (type(view), alloc.free, tensor.kind.itemsize, buffer.trace_name, view.offset, view.shape,
               view.strides, window)
    else:   # an HBM region's index box depends on the index map, when it indexes the tensor's own shape
        canonical = alloc.canonical
        boxed = view.tensor_indexed and (canonical is tensor or canonical.shape == tensor.shape)
        key = (type(view), tensor.kind.itemsize, buffer.trace_name, view.offset, view.shape, view.strides, window,
               view.index_map if boxed else None)
    try:
        known = _OPERANDS.get(key)
    except TypeError:       # a geometry held in lists (not a view of a subscript): not memoised
        return alloc, Operand(view, window, alloc)
    if known is None:
        known = _OPERANDS[key] = Operand(view, window, alloc)
    if type(view) is View:
        view.memo = (alloc, window, known)
    return alloc, known


def start_partitions(count):
    """The partitions an engine access of `count` partitions may start at: more than 64 at 0, 33 to 64 at 0 or 64;
    None (any) for at most 32. The NKI Library's own hardware tests of cross_partition_copy copy 16 partitions from
    partition 5, 15 from 17, 20 from 25 and 32 from 28 with nisa.tensor_copy (nc_stream_shuffle keeps its stricter
    documented rule, see isa_select.nc_stream_shuffle)."""
    return (0,) if count > 64 else (0, 64) if count > 32 else None


def _start_partition_allowed(p0, p1):
    allowed = start_partitions(p1 - p0)
    return allowed is None or p0 in allowed


def _check_start_partition(p0, p1, line):
    allowed = start_partitions(p1 - p0)
    if allowed is not None and p0 not in allowed:
        raise CompileError(f'an engine access of {p1 - p0} partitions must start at partition '
                           f'{" or ".join(map(str, allowed))}, not {p0}', line)


def record(run: Run, pending: 'Pending', reads: List[Tuple[View, Any]], writes: List[Tuple[View, Any]],
           accumulate: bool) -> None:
    """Turn a settled instruction into a trace record (CompileErrors get the instruction's kernel line); a copy at
    a tile of N dynamic offsets into N records, one per offset (its element run and its element of the index)."""
    if run.races is not None and run.races.active:  # HBM another program of the launch wrote (a read-modify-write's
        for view, window in reads:                  # own destination is its atomic add)
            if not view.tensor.buffer.on_chip and not (pending.rmw and any(view.tensor is w.tensor for w, _ in writes)):
                run.races.read(view, window, run.program_ids, pending.line)
    if pending.runs is None:
        _record(run, pending, reads, writes, accumulate)
        return
    runs = pending.runs
    axis, count = runs.axis, runs.count
    for k in range(count):
        parts = []
        for view, window in list(reads) + list(writes):
            if view is runs.index:
                parts.append((view, runs.index_window(k)))
                continue
            if len(view.shape) <= axis or view.shape[axis] != count:
                raise CompileError(f'a copy at a tile of {count} dynamic offsets: an operand of shape {view.shape} '
                                   f'does not run along its axis {axis}', pending.line)
            bounds = list(window) if window is not None else [(0, n) for n in view.shape]
            lo, hi = max(bounds[axis][0], k), min(bounds[axis][1], k + 1)
            if hi <= lo:
                break
            bounds[axis] = (lo, hi)
            parts.append((view, tuple(bounds)))
        else:
            _record(run, pending, parts[:len(reads)], parts[len(reads):], accumulate)


def _record(run: Run, pending: 'Pending', reads: List[Tuple[View, Any]], writes: List[Tuple[View, Any]],
            accumulate: bool) -> None:
    recorder = run.recorder
    full = pending.window_free
    if run.placed is not None:
        _check_placed(run, pending, reads, writes, full)
    if not recorder.traced:
        _note_writes(run, pending, writes, full)
        return
    read_regions = []
    read_operands = []
    free_max = 0
    on_chip_read_parts = 0
    compute = pending.eng != 'dma'
    for view, window in reads:
        alloc, operand = _operand(view, None if full else window, recorder)
        region = operand.region
        read_regions.append((alloc, region, operand.token))
        read_operands.append(operand)
        if operand.free > free_max:
            free_max = operand.free
        if compute and not operand.start_allowed:
            _check_start_partition(region[0], region[1], pending.line)
        if operand.parts > on_chip_read_parts and view.tensor.buffer.on_chip:
            on_chip_read_parts = operand.parts
    write_regions = []
    write_operands = []
    partitions = 1
    accumulating = pending.accumulating
    for view, window, footprint in _written(pending, writes, full):
        alloc, operand = _operand(view, window, recorder)
        region = operand.region
        write_regions.append((alloc, region, operand.token, accumulating, footprint))
        write_operands.append(operand)
        if operand.free > free_max:
            free_max = operand.free
        if operand.parts > partitions:
            partitions = operand.parts
        if compute and not operand.start_allowed:
            _check_start_partition(region[0], region[1], pending.line)
    if partitions > PARTITION_LIMIT:
        # a DMA writing more than 128 rows of HBM: the partitions it spans are its on-chip source's, and a copy
        # between HBM tensors spreads over every queue as a 128-partition one does
        partitions = on_chip_read_parts or PARTITION_LIMIT
    if full:    # the instruction's own windows, for the fields that measure what it touches
        read_operands = [_operand(view, window, recorder)[1] for view, window in reads]
        write_operands = [_operand(view, window, recorder)[1] for view, window in writes]
    else:
        del write_operands[len(writes):]
    try:
        recorder.record(_fields(pending, reads, writes, read_operands, write_operands, free_max, partitions),
                        read_regions, write_regions, run.affine_context,
                        _extra(run, pending, reads, writes, read_operands, write_operands, accumulate),
                        pending.consts)
        if pending.dma is not None:
            for alloc, _, _ in read_regions:
                if alloc.buffer.scratch:
                    recorder.note_scratch_dma(alloc)
            for alloc, *_ in write_regions:
                if alloc.buffer.scratch:
                    recorder.note_scratch_dma(alloc)
        if pending.value_key is not None and len(write_regions) == 1 and not pending.accumulating:
            alloc, region, footprint = write_regions[0][0], write_regions[0][1], write_regions[0][4]
            alloc.origin = _load_origin(pending, alloc, region, footprint)
    except CompileError as error:
        error.line = error.line or pending.line
        raise


def _load_origin(pending, alloc, region, footprint):
    """What a load leaves in its destination, for the CSE of transposes by value (isa._value_key): the load's source
    key, the region it wrote, the allocation's version after it and the destination's layout (offset, shape,
    strides). None unless the load wrote every element of that region (no elementwise mask, partitions and free
    elements dense): a view of elements it did not write holds other data, which must not share its name."""
    if pending.where is not None or footprint is None or isinstance(footprint[0], IndirectView):
        return None
    view, window = footprint
    _, shape = view.clip(window)
    p0, p1, f0, f1, _ = region
    if _elements(shape) != (p1 - p0) * (f1 - f0):
        return None
    return pending.value_key, region, alloc.version, (view.offset, view.shape, view.strides, window)


def _check_placed(run, pending, reads, writes, full):
    """Reads and writes of tensors the kernel placed itself (direct allocation): a read of bytes another placed
    tensor wrote over raises AliasedReadError (nki_sim/placement.py)."""
    placed = run.placed
    placements = placed.placements
    for view, window in reads:
        if view.tensor in placements:
            region = _operand(view, None if full else window, run.recorder)[1].region
            placed.read(view.tensor, view.block, region, pending.line)
    for view, window, _ in _written(pending, writes, full):
        if view.tensor in placements:
            region = _operand(view, window, run.recorder)[1].region
            placed.write(view.tensor, view.block, region, pending.line)
        elif view.tensor.source in placements:     # a bitcast of a placed tensor: not tracked, never flagged
            placed.forget(view.tensor.source, view.block)


def _written(pending, writes, full):
    """(view, window, footprint) of each location an instruction writes (its extra writes included; no window when
    it writes whole views); the footprint, the written elements themselves, is for the affine_range conflict check
    (none for an indirect scatter)."""
    for view, window in (list(writes) + list(pending.extra_writes)) if pending.extra_writes else writes:
        window = None if full else window
        yield view, window, None if isinstance(view, IndirectView) else (view, window)


def _note_writes(run, pending, writes, full):
    """Recording a program (no trace): only which HBM tensors the kernel wrote (a kernel that returns nothing
    returns the arguments it wrote). The replay settles and checks every write of the program (regions, start
    partitions, and the affine_range write conflicts in the loop context the program's `affine` entries carry)
    and reports them with the instruction's line."""
    for view, _, _ in _written(pending, writes, full):
        alloc = view.tensor.hbm_alloc
        if alloc is not None:
            alloc.written = True
    run.recorder.count += 1


def _fields(pending, reads, writes, read_operands, write_operands, free_max, partitions):
    """The record's 'op=.. eng=.. p=.. n=..' part."""
    n = pending.n if pending.n is not None else free_max
    p = pending.p if pending.p is not None else partitions
    fields = f'op={pending.op} eng={pending.eng} p={p} n={n}'
    if pending.alu:
        fields += f' alu={pending.alu}'
    if pending.reduces or pending.extra_writes:
        fields += ' red=1'
    if pending.nstat:
        fields += f' nstat={pending.nstat}'
    if pending.op in _DTYPE_COSTED_OPS:
        dt = _compute_dtype_bytes(pending.op, reads, writes)
        if dt not in (0, 4):
            fields += f' dt={dt}'
    if pending.dma is None:
        # the widest innermost step of its on-chip operands (Operand.step: the stride of the innermost free axis
        # of more than one element; a broadcast's stride 0 reads one element, the partition axis is not a step)
        stride = max([operand.step for operand in read_operands + write_operands], default=0)
        if stride > STRIDE_FREE_BYTES:
            fields += f' stride={stride}'
    return fields


# An engine access whose innermost step is wider than this halves the engine's SBUF/PSUM bandwidth (NKI performance
# guide; trace `stride`, the timing model doubles the instruction's cost)
STRIDE_FREE_BYTES = 16


def _extra(run, pending, reads, writes, read_operands, write_operands, accumulate):
    """The record's trailing fields: acc, cse, line and the DMA description."""
    recorder = run.recorder
    extra = []
    if accumulate and pending.op in ('matmul', 'transpose'):
        extra.append('acc=1')
    # bytes per partition a DMA from HBM brings on chip: they bound load reuse and CSE (TraceRecorder.seen_before)
    loaded = _loaded_bytes(pending, reads, writes, write_operands)
    key = pending.cse_key
    if key is None:
        recorder.loaded += loaded
    elif recorder.seen_before(key, write_operands[0].partition_bytes, loaded, key[0] != 'transpose'):
        # (a repeated transpose stays unbounded: the calibration kernels' compiler keeps lora's transposed tiles,
        # spilling them, see docs/simulator.md "Data reuse")
        extra.append('cse=1')
    if pending.dynamic:
        extra.append('dyn=1')
    extra.append(f'line={pending.line}')
    if pending.dma is not None:
        extra.append(_dma_fields(pending, reads, writes, read_operands, write_operands))
    return ' '.join(extra)


def _loaded_bytes(pending, reads, writes, write_operands):
    """The bytes per partition a DMA reading HBM writes on chip (0 for any other instruction)."""
    if pending.dma is None or not writes:
        return 0
    if not writes[0][0].tensor.buffer.on_chip or all(view.tensor.buffer.on_chip for view, _ in reads):
        return 0
    return write_operands[0].partition_bytes


def _compute_dtype_bytes(op, reads, writes):
    """The element size an engine computes in (trace `dt`): the widest SBUF operand; PE ops count their SBUF inputs
    only (their PSUM output is always fp32). A tensor_reduce is 2 when it reads bfloat16 from SBUF (the page's "N/2
    for bf16 add/max", whatever format its one value per partition is written in; other inputs are cast to float32
    and read at N). 0 when no operand is in SBUF."""
    if op == 'tensor_reduce':
        inputs = [view.tensor.kind for view, _ in reads if view.tensor.buffer is memory.sbuf]
        return 2 if inputs and all(getattr(k.public, 'name', None) == 'bfloat16' for k in inputs) else 0
    widest = 0
    for view, _ in reads:
        tensor = view.tensor
        if tensor.buffer is memory.sbuf and tensor.kind.itemsize > widest:
            widest = tensor.kind.itemsize
    if op not in _PE_OPS:
        for view, _ in writes:
            tensor = view.tensor
            if tensor.buffer is memory.sbuf and tensor.kind.itemsize > widest:
                widest = tensor.kind.itemsize
    return widest


_PE_OPS = frozenset(('matmul', 'transpose', 'broadcast'))
# the ops whose cost depends on the element size in the timing model (PE fp32 factor, DVE 16-bit rates)
_DTYPE_COSTED_OPS = _PE_OPS | {'tensor_tensor', 'loop_reduce', 'tensor_reduce'}


def _dma_fields(pending, reads, writes, read_operands, write_operands):
    """The DMA fields of a trace line: `bytes` those read from HBM (every HBM source of a DMA that sums several,
    nisa.dma_compute), else, for a store, those written to HBM, else those of the first source; direction,
    contiguous run and the HBM side's kind."""
    hbm_sources = [k for k, (view, _) in enumerate(reads) if not view.tensor.buffer.on_chip]
    source = (hbm_sources or [0])[0]
    src, dst = reads[source][0], writes[0][0]
    if not hbm_sources and not dst.tensor.buffer.on_chip:
        # a store writes HBM in the destination's format: a float8 tile stored into float32 HBM moves 4 bytes per
        # element (counted at the tile's 1 byte, a 64 MiB output counted 16 MiB and its time a quarter)
        moved = write_operands[0].bytes
    else:
        moved = 0
        for k in hbm_sources or [source]:
            moved += read_operands[k].bytes
    run = min(read_operands[source].run, write_operands[0].run)
    if pending.element_runs:
        run = min(run, dst.tensor.kind.itemsize)
    hbm_side = dst if pending.dma == 'store' else src
    if pending.dma == 'copy':
        hbm_side = src if not src.tensor.buffer.on_chip else dst
    scratch = 'scratch' if hbm_side.tensor.buffer.scratch else 'io'
    return f'dir={pending.dma} bytes={moved} run={run} hbm={scratch}'


def direct(run: Run, pending: 'Pending', dst: View, window: Any, where: Optional[np.ndarray] = None) -> None:
    """Record an instruction that writes its named destination (store, dma_copy) right away; `where` (an
    elementwise mask of dst's shape) limits the elements it writes."""
    # a source read or a destination written past its tensor's end (`x[0:128]` of a 64-row x) is refused here, at
    # its own line, as issue() does for computed instructions: the recording checked it only when the instruction
    # was flushed, after any error of the kernel's next lines (round 49a: a later slice error was named instead).
    # Under an elementwise mask (`where`) the destination is checked where the mask holds, by the numerics.
    for view, view_window in pending.reads + ([] if where is not None else [(dst, window)]):
        if not view.in_bounds:
            view.clip(view_window)
    # a DMA through a bitcast to a wider element: the bookkeeping is of the viewed tensor's elements it covers
    view, at, under = dst.in_allocation(window, where)
    if run.coverage is not None and not view.tensor.buffer.on_chip:
        written = run.coverage.get(view.tensor.hbm_alloc.serial)
        if written is not None:
            if isinstance(view, IndirectView):
                view.scatter_over(written, True, at)
            elif under is not None:
                np.logical_or(view.array_over(written, at), under, out=view.array_over(written, at))
            else:
                view.array_over(written, at)[...] = True
    if run.races is not None and run.races.active and not view.tensor.buffer.on_chip:
        run.races.write(view, at, run.program_ids, pending.line, under, pending.rmw)
    record(run, pending, pending.reads, [(dst, window)], False)


def operand_reads(views: List[View], window: Any, out_shape: Tuple[int, ...]) -> List[Tuple[View, Any]]:
    """(view, window) pairs for instruction operands under the instruction's mask window."""
    return [(v, operand_window(window, out_shape, v.shape)) for v in views]
