"""The instruction trace (services/profiler/trainium/TRACE_FORMAT.md): records, dependencies, liveness, CSE.

`TraceRecorder.record` takes one executed instruction with the regions it reads and writes, computes its RAW/WAR/WAW
dependencies on overlapping regions of the same allocation (history pruned by covering writes), checks that no two
iterations of an affine_range loop write the same location, and buffers the `I` line. `A` lines are buffered when an
on-chip allocation is first touched; `F` lines are placed after each allocation's last use when the trace is written.

The last uses also form a liveness plan: a later run of the same kernel (same instruction stream) passes it back in
as `free_plan` so that dead blocks are released as soon as their last reader has executed.
"""
from typing import Any, Dict, List, Tuple

import numpy as np

from . import target
from .errors import CompileError, StaleStateError
from .memory import Alloc

READ_HISTORY_LIMIT = 64


class TraceRecorder:
    traced = True

    def __init__(self, kernel_name, timing_only, free_plan=None):
        self.kernel_name = kernel_name
        self.timing_only = timing_only
        self.free_plan = free_plan or {}
        self.lines = []
        self.core = 0          # NeuronCore of the program being traced (SPMD launches over nl.nc(n))
        self.count = 0
        self.allocs = []
        # CSE and load reuse: key -> `loaded` just after the key's last occurrence (reused or not)
        self.cse_keys: Dict[Any, int] = {}
        # bytes per partition the kernel's DMAs have brought on chip from HBM so far (reuses bring nothing)
        self.loaded = 0
        self.scratch_dmas: Dict[int, List[int]] = {}   # HBM scratch allocation serial -> its DMA trace lines

    # ----- allocations -----
    def touch(self, alloc: Alloc) -> None:
        if alloc.freed:
            raise StaleStateError(
                f'allocation {alloc.id} was used after its last use in an earlier identical run: the kernel '
                'issued a different instruction stream this time (stateful or non-deterministic kernel)')
        if alloc.id < 0 and alloc.buffer.on_chip:
            alloc.id = len(self.allocs)
            self.allocs.append(alloc)
            line = (f'A id={alloc.id} buf={alloc.buffer.trace_name} bytes_pp={alloc.free * alloc.itemsize}'
                    f' parts={alloc.parts} site={alloc.site}')
            if alloc.group is not None:
                if alloc.group[0] is None:
                    alloc.group[0] = alloc.id
                line += f' tensor={alloc.group[0]} blk={alloc.block}'
            if self.core:
                line += f' core={self.core}'
            self.lines.append(line)

    def note_scratch_dma(self, alloc: Alloc) -> None:
        """The instruction just recorded is a DMA of an `nl.hbm` tensor (traced `hbm=scratch`)."""
        lines = self.scratch_dmas.setdefault(alloc.serial, [])
        if not lines or lines[-1] != len(self.lines) - 1:
            lines.append(len(self.lines) - 1)

    def mark_output(self, alloc: Alloc) -> None:
        """An `nl.hbm` tensor the kernel returned is an output: its DMAs are kernel I/O, not spill traffic."""
        for index in self.scratch_dmas.pop(alloc.serial, ()):
            self.lines[index] = self.lines[index].replace(' hbm=scratch', ' hbm=io')

    def seen_before(self, key: Any, size: int = 0, loaded: int = 0, bounded: bool = True) -> bool:
        """CSE and load reuse: has an identical instruction (same key, inputs unchanged) been recorded already, and
        could its result still be on chip? `size`: the bytes per partition of its result; `loaded`: those it brings
        on chip from HBM when it is not a reuse (a load). Bounded (docs/simulator.md "Data reuse"), a repeat is a
        reuse only if the bytes per partition brought on chip since the key's last occurrence plus its own result
        fit one SBUF partition of the target (trn1 192 KiB, trn2 224 KiB: 24 / 28 MiB over 128 partitions,
        nki_sim/target.py); otherwise it runs again and becomes the key's new reference point."""
        last = self.cse_keys.get(key)
        if last is not None and (not bounded or self.loaded - last + size <= target.sbuf_partition_bytes()):
            self.cse_keys[key] = self.loaded
            return True
        self.loaded += loaded
        self.cse_keys[key] = self.loaded
        return False

    # ----- instructions -----
    def record(self, fields: str, reads: List[Tuple[Any, ...]], writes: List[Tuple[Any, ...]], context: Any,
               extra: str = '', consts: int = 0) -> int:
        """Buffer one I record. `fields` is the pre-formatted 'op=.. eng=.. p=.. n=..' part; reads are
        (alloc, (p0, p1, f0, f1, box), token) and writes (alloc, region, token, accumulating, footprint) with
        regions as View.region returns them (footprint: the written view and window, or None); `consts` counts
        scalar/immediate operands."""
        me = self.count
        deps = []
        on_chip_ids = []
        for alloc, region, _ in reads:
            p0, p1, f0, f1, box = region
            for w in alloc.writes:
                r = w[1]
                if r[0] < p1 and p0 < r[1] and r[2] < f1 and f0 < r[3] and (box is None and r[4] is None
                                                                          or _boxes_overlap(r[4], box)):
                    deps.append(w[0])
            history = alloc.reads
            history.append((me, region))
            if len(history) > READ_HISTORY_LIMIT:
                del history[0]
            alloc.last_use = me
            if alloc.id >= 0:
                on_chip_ids.append(alloc.id)
        written_ids = []
        for alloc, region, _, accumulating, footprint in writes:
            settle_write(alloc, region, context, accumulating, me, deps, footprint)
            if alloc.reads:
                reads_kept = []
                p0, p1, f0, f1, box = region
                for r in alloc.reads:
                    o = r[1]
                    if o[0] < p1 and p0 < o[1] and o[2] < f1 and f0 < o[3] and (box is None and o[4] is None
                                                                              or _boxes_overlap(o[4], box)):
                        if r[0] != me:
                            deps.append(r[0])
                        if _covers(region, o):
                            continue
                    reads_kept.append(r)
                alloc.reads = reads_kept
            alloc.last_use = me
            if alloc.id >= 0:
                written_ids.append(alloc.id)
        parts = ['I id=', str(me), ' ', fields]
        if reads or consts:
            tokens = [r[2] for r in reads]
            if consts:
                tokens += ['const:0'] * consts
            parts += (' in=', ','.join(tokens))
        parts += (' out=', ','.join([w[2] for w in writes]))
        if deps:
            parts += (' dep=', str(deps[0]) if len(deps) == 1 else _id_list(deps))
        if on_chip_ids:
            parts += (' ra=', str(on_chip_ids[0]) if len(on_chip_ids) == 1 else _id_list(on_chip_ids))
        if written_ids:
            parts += (' wa=', str(written_ids[0]) if len(written_ids) == 1 else _id_list(written_ids))
        if extra:
            parts += (' ', extra)
        if self.core:
            parts += (' core=', str(self.core))
        self.lines.append(''.join(parts))
        self.count = me + 1
        dead = self.free_plan.get(me)
        if dead:
            for aid in dead:
                if aid < len(self.allocs):
                    alloc = self.allocs[aid]
                    alloc.data = None
                    alloc.freed = True
        return me

    # ----- output -----
    def liveness_plan(self) -> Dict[int, List[int]]:
        """{instruction id: [alloc ids whose last use it is]}"""
        plan: Dict[int, List[int]] = {}
        for alloc in self.allocs:
            plan.setdefault(alloc.last_use, []).append(alloc.id)
        return plan

    def text(self) -> str:
        plan = self.liveness_plan()
        out = ['accelopt-trace 1',
               f'M kernel={self.kernel_name} timing_only={int(self.timing_only)} instructions={self.count}']
        instr = 0
        for line in self.lines:
            out.append(line)
            if line[0] == 'I':
                for aid in plan.get(instr, ()):
                    out.append(f'F id={aid}')
                instr += 1
        for aid in plan.get(-1, ()):
            out.append(f'F id={aid}')
        return '\n'.join(out) + '\n'

    def write(self, path: str) -> None:
        with open(path, 'w') as f:
            f.write(self.text())


class Untraced:
    """Stands in for a TraceRecorder where no trace is wanted: recording a program, which the replay executes, checks
    and traces (protocol/replay.py). Instructions are only counted: the region, start-partition and affine_range
    write checks that tracing makes are the replay's, which reports them with the instruction's kernel line."""
    traced = False

    def __init__(self, kernel_name: str) -> None:
        self.kernel_name = kernel_name
        self.core = 0
        self.count = 0

    def touch(self, alloc: Alloc) -> None:
        """Allocations are not traced."""

    def mark_output(self, alloc: Alloc) -> None:
        """No trace lines to mark."""


def settle_write(alloc: Alloc, region: Tuple[Any, ...], context: Any, accumulating: bool, me: int,
                  deps: Any, footprint: Any = None) -> None:
    """Record instruction `me`'s write of `region`: earlier overlapping writes become dependencies (when `deps` is
    a list), raise if another iteration of the same affine_range loop wrote one of the same elements
    (`footprint`: the written view and window), and drop those it covers."""
    kept = []
    p0, p1, f0, f1, box = region
    for w in alloc.writes:
        o = w[1]
        if o[0] < p1 and p0 < o[1] and o[2] < f1 and f0 < o[3] and (box is None and o[4] is None
                                                                  or _boxes_overlap(o[4], box)):
            if deps is not None:
                deps.append(w[0])
            if not (accumulating and w[3]) and _different_affine_iterations(w[2], context) and \
                    _elements_overlap(w[4], footprint):
                raise CompileError('Unexpected output dependencies: different iterations of an affine_range '
                                   'loop write the same location (use nl.sequential_range, or write to '
                                   'disjoint locations per iteration)')
            if _covers(region, w[1]):
                continue
        kept.append(w)
    kept.append((me, region, context, accumulating, footprint))
    alloc.writes = kept
    alloc.written = True
    alloc.version += 1


# Footprints larger than this are compared by their bounding regions only (conservatively overlapping), unless
# both lie on one lattice (same shape and strides), which is decided exactly without listing elements.
FOOTPRINT_LIMIT = 1 << 18
# Search steps allowed to the lattice test before it gives up (views whose strides interleave, rare).
LATTICE_STEPS_LIMIT = 4096


def _elements(offset: int, shape: Any, strides: Any) -> Any:
    """The flat element offsets a write touched in its allocation, or None when too many."""
    count = 1
    for n in shape:
        count *= n
    if count > FOOTPRINT_LIMIT:
        return None
    flat = np.full(1, offset, dtype=np.int64)
    for n, s in zip(shape, strides):
        flat = (flat[:, None] + s * np.arange(n, dtype=np.int64)[None, :]).reshape(-1)
    return flat


def _elements_overlap(a: Any, b: Any) -> bool:
    """Do two writes touch a common element? Their bounding regions already overlap; strided writes can still
    interleave (W[:, k, i, j] for different (i, j)). Unknown footprints count as overlapping."""
    if a is None or b is None:
        return True
    (view_a, window_a), (view_b, window_b) = a, b
    offset_a, shape_a = view_a.clip(window_a)
    offset_b, shape_b = view_b.clip(window_b)
    if 0 in shape_a or 0 in shape_b:
        return False
    if shape_a == shape_b and tuple(view_a.strides) == tuple(view_b.strides):
        found = lattice_overlap(offset_b - offset_a, shape_a, view_a.strides)
        if found is not None:
            return found
    ea, eb = _elements(offset_a, shape_a, view_a.strides), _elements(offset_b, shape_b, view_b.strides)
    if ea is None or eb is None:
        return True
    return bool(np.intersect1d(ea, eb, assume_unique=False).size)


def lattice_overlap(delta: int, shape: Any, strides: Any) -> Any:
    """Do two accesses of one shape and strides whose offsets differ by `delta` touch a common element? That is:
    is delta = sum(k_i * strides_i) for some integers |k_i| < shape_i? Decided digit by digit from the largest
    stride, trying only the k_i that leave a remainder the smaller strides can still reach (one or two for views
    whose strides nest, as loop-indexed tiles do). None when the search would take too long; the caller then
    compares elements."""
    dims = sorted(((abs(s), n) for s, n in zip(strides, shape) if n > 1 and s != 0), reverse=True)
    reach = [0] * (len(dims) + 1)        # reach[i]: the largest |sum| dims i.. can make
    for i in range(len(dims) - 1, -1, -1):
        reach[i] = reach[i + 1] + dims[i][0] * (dims[i][1] - 1)
    steps = 0
    pending = [(0, delta)]
    while pending:
        i, rest = pending.pop()
        steps += 1
        if steps > LATTICE_STEPS_LIMIT:
            return None
        if i == len(dims):
            if rest == 0:
                return True
            continue
        stride, n = dims[i]
        low = max(-(n - 1), -((reach[i + 1] - rest) // stride))      # ceil((rest - reach) / stride)
        high = min(n - 1, (rest + reach[i + 1]) // stride)           # floor((rest + reach) / stride)
        for k in range(low, high + 1):
            pending.append((i + 1, rest - k * stride))
    return False


def _id_list(ids):
    if len(ids) == 1:
        return str(ids[0])
    return ','.join(map(str, sorted(set(ids))))


def _overlap(a, b):
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3] and _boxes_overlap(a[4], b[4])


def _boxes_overlap(box_a, box_b):
    """HBM index boxes; an unknown box (None) may overlap anything."""
    if box_a is None or box_b is None or len(box_a) != len(box_b):
        return True
    for (lo_a, hi_a), (lo_b, hi_b) in zip(box_a, box_b):
        if hi_a < lo_b or hi_b < lo_a:
            return False
    return True


def _covers(outer, inner):
    """Does region `outer` contain region `inner` (conservatively: only checked on the bounding ranges when
    neither is an HBM index box)?"""
    if not (outer[0] <= inner[0] and inner[1] <= outer[1] and outer[2] <= inner[2] and inner[3] <= outer[3]):
        return False
    if outer[4] is None and inner[4] is None:
        return True
    if outer[4] is None or inner[4] is None or len(outer[4]) != len(inner[4]):
        return False
    return all(lo_o <= lo_i and hi_i <= hi_o for (lo_o, hi_o), (lo_i, hi_i) in zip(outer[4], inner[4]))


def _different_affine_iterations(a, b):
    """True when two loop contexts sit in the same affine_range loop instance but different iterations."""
    for (loop_a, it_a), (loop_b, it_b) in zip(a, b):
        if loop_a != loop_b:
            return False
        if it_a != it_b:
            return True
    return False
