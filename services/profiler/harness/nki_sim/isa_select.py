"""nisa instructions that select, find or move elements within partitions (re-exported by isa as nisa.*):
max8, nc_find_index8, nc_match_replace8, tensor_copy_predicated, nc_stream_shuffle, nonzero_with_count,
nc_n_gather, local_gather, dma_transpose, core_barrier, sequence_bounds.

Each issues one trace instruction of an existing record kind (TRACE_FORMAT.md): the vector-engine searches are
`tensor_reduce` over the data they scan, the predicated copy a `select`, the quadrant shuffle and the GpSimd gathers a `copy`, the DMA
transpose a DMA `load`/`copy`, the GpSimd segment scan of sequence_bounds and the nonzero search of
nonzero_with_count a `select` on the pool engine.
"""
from typing import Any, Callable, List

import numpy as np

from .compute import assign
from .dtypes import kind_of
from .errors import CompileError
from .indirect import GatherTransposeView, IndirectView
from .operands import engine_name, fit, on_chip, unapplied_mask, unknown_engine
from .operands import mask as mask_of
from .operands import partition_rows
from .runtime import begin, current, issue, operand
from .target import nc_version
from .tensors import PARTITION_LIMIT
from .views import View

TOP = 8
NOT_FOUND = 0xFFFFFFFF      # nc_find_index8's index for a value absent from the partition


def _dst_format(name: str, dtype: Any, target: View) -> None:
    """dtype= of an instruction that writes into dst: dst's own format, or refused (never silently ignored)."""
    if dtype is not None and kind_of(dtype) != target.tensor.kind:
        raise CompileError(f'{name}: dtype={kind_of(dtype).public} differs from dst\'s '
                           f'{target.tensor.kind.public}; the result takes dst\'s format (declare dst in the format '
                           'wanted)')


def _issue(op: str, eng: str, views: List[View], shape: Any, kind: Any, compute: Callable[..., np.ndarray]) -> Any:
    run = begin()
    result = fit(compute(*[v.array() for v in views]), kind, shape) if run.numerics else None
    return issue(run, op, eng, [(v, None) for v in views], tuple(shape), kind, result).tile


def max8(src: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """The 8 largest values of each partition, in descending order ([P, 8])."""
    unapplied_mask('nisa.max8', mask)
    view = on_chip(operand(src), 'max8')
    if view.free_size < TOP:
        raise CompileError(f'max8 needs at least {TOP} elements per partition, got {view.free_size}')
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind

    def top(x: np.ndarray) -> np.ndarray:
        return -np.sort(-partition_rows(x), axis=1)[:, :TOP]
    return _issue('tensor_reduce', 'dve', [view], (view.shape[0], TOP), kind, top)


def _first_positions(data: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Per partition, the flat position of the first element equal to each of the 8 values (distinct matches
    for repeated values, as the hardware marks each match found); UINT32_MAX when a value is absent (AWS's
    neuronx-distributed find_index kernel pools quadrants with a min over these, relying on it)."""
    rows = partition_rows(data)
    wanted = partition_rows(vals)
    out = np.full(wanted.shape, NOT_FOUND, dtype=np.int64)
    for p in range(rows.shape[0]):
        taken = set()
        for j in range(wanted.shape[1]):
            for position in np.flatnonzero(rows[p] == wanted[p, j]):
                if position not in taken:
                    taken.add(int(position))
                    out[p, j] = position
                    break
    return out


def _search_operands(data: Any, vals: Any, name: str) -> List[View]:
    views = [on_chip(operand(data), name), on_chip(operand(vals), name)]
    if views[1].free_size != TOP or views[1].shape[0] != views[0].shape[0]:
        raise CompileError(f'{name}: vals must hold {TOP} values per partition of data ([P, {TOP}]), '
                           f'got {views[1].shape}')
    return views


def nc_find_index8(data: Any, vals: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """Per partition, the index of the first occurrence of each of the 8 vals in data ([P, 8], uint32)."""
    unapplied_mask('nisa.nc_find_index8', mask)
    views = _search_operands(data, vals, 'nc_find_index8')
    kind = kind_of(dtype if dtype is not None else np.uint32)
    return _issue('tensor_reduce', 'dve', views, (views[0].shape[0], TOP), kind, _first_positions)


def nc_match_replace8(data: Any, vals: Any, imm: Any, dst_idx: Any = None, dtype: Any = None, mask: Any = None,
                      **kwargs: Any) -> Any:
    """data with the first occurrence of each of the 8 vals (per partition) replaced by imm; with dst_idx, the
    replaced positions are also written there ([P, 8])."""
    unapplied_mask('nisa.nc_match_replace8', mask)
    views = _search_operands(data, vals, 'nc_match_replace8')
    kind = kind_of(dtype) if dtype is not None else views[0].tensor.kind
    value = float(imm)

    def replace(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        rows = partition_rows(x).copy()
        positions = _first_positions(x, v)
        for p in range(rows.shape[0]):
            hit = positions[p][positions[p] < rows.shape[1]]
            rows[p, hit] = value
        return rows.reshape(x.shape)
    tile = _issue('tensor_reduce', 'dve', views, views[0].shape, kind, replace)
    if dst_idx is not None:
        assign(operand(dst_idx), nc_find_index8(data=data, vals=vals))
    return tile


def tensor_copy_predicated(dst: Any, src: Any, predicate: Any, reverse_pred: Any = False, dtype: Any = None,
                           mask: Any = None, engine: Any = unknown_engine, **kwargs: Any) -> None:
    """dst = src where predicate is true (false with reverse_pred); dst keeps its values elsewhere."""
    unapplied_mask('nisa.tensor_copy_predicated', mask)
    target = on_chip(operand(dst), 'tensor_copy_predicated')
    _dst_format('tensor_copy_predicated', dtype, target)
    scalar = isinstance(src, (bool, int, float, np.number))
    # src may be a number (the documented `src: float | tile`): copied into dst where the predicate selects; a
    # Python float needs a float dst, an int an integer dst
    if scalar and isinstance(src, (float, np.floating)) and not np.issubdtype(target.tensor.kind.storage,
                                                                               np.floating):
        raise CompileError(f'tensor_copy_predicated: a float src ({src}) needs a float dst, not '
                           f'{target.tensor.kind.public}')
    source = None if scalar else on_chip(operand(src), 'tensor_copy_predicated')
    condition = on_chip(operand(predicate), 'tensor_copy_predicated')
    run = begin()
    kind = target.tensor.kind
    result = None
    if run.numerics:
        chosen = partition_rows(condition.array()) != 0
        if reverse_pred:
            chosen = ~chosen
        values = np.broadcast_to(np.asarray(src) if source is None else partition_rows(source.array()), chosen.shape)
        result = np.where(chosen, values, partition_rows(target.array())).reshape(target.shape).astype(kind.storage)
    reads = ([] if source is None else [(source, None)]) + [(condition, None), (target, None)]
    pending = issue(run, 'select', engine_name(engine), reads, target.shape, kind, result)
    assign(target, pending.tile)


def nc_stream_shuffle(src: Any, dst: Any, shuffle_mask: Any, dtype: Any = None, mask: Any = None,
                      **kwargs: Any) -> None:
    """Within each quadrant of 32 partitions, output partition i copies input partition shuffle_mask[i];
    255 leaves output partition i unchanged."""
    unapplied_mask('nisa.nc_stream_shuffle', mask)
    source = on_chip(operand(src), 'nc_stream_shuffle')
    target = on_chip(operand(dst), 'nc_stream_shuffle')
    _dst_format('nc_stream_shuffle', dtype, target)
    order = [int(m) for m in shuffle_mask]
    if len(order) != 32 or any(not (0 <= m < 32 or m == 255) for m in order):
        raise CompileError('nc_stream_shuffle: shuffle_mask is 32 partition numbers below 32 (or 255 to skip)')
    if source.free_size != target.free_size:
        raise CompileError(f'nc_stream_shuffle: src and dst hold {source.free_size} and {target.free_size} '
                           'elements per partition')
    _check_shuffle_starts(source, target)
    run = begin()
    kind = target.tensor.kind
    result = None
    if run.numerics:
        data = partition_rows(source.array())
        out = partition_rows(target.array()).copy()
        for p in range(target.shape[0]):
            pick = order[p % 32]
            row = (p // 32) * 32 + pick
            if pick != 255 and row < data.shape[0]:
                out[p] = data[row]
        result = out.reshape(target.shape).astype(kind.storage)
    pending = issue(run, 'copy', 'dve', [(source, None), (target, None)], target.shape, kind, result)
    assign(target, pending.tile)


def _check_shuffle_starts(source: View, target: View) -> None:
    """The nc_stream_shuffle API page: with num_active_partitions = ceil(max(src, dst partitions) / 32) * 32, both
    accesses start at partition 0 (96 or 128 active), 0 or 64 (64 active), or 0, 32, 64 or 96 (32 active)."""
    active = -(-max(source.shape[0], target.shape[0]) // 32) * 32
    allowed = (0,) if active > 64 else (0, 64) if active > 32 else (0, 32, 64, 96)
    for name, view in (('src', source), ('dst', target)):
        start = view.region(None, view.tensor.free)[0]
        if start not in allowed:
            raise CompileError(f'nc_stream_shuffle: {name} starts at partition {start}; with {active} active '
                               f'partitions src and dst start at partition {" or ".join(map(str, allowed))}')


setattr(nc_stream_shuffle, 'beta2_order', ('dst', 'src', 'shuffle_mask'))     # Beta 1 positional order: src, dst


GPSIMD_STRIDE = 16     # each GpSimd core reads and writes the first of its 16 partitions


def nonzero_with_count(dst: Any, src: Any, index_offset: Any = 0, padding_val: Any = -1, **kwargs: Any) -> None:
    """On partitions 0, 16, ..., 112 only: dst[p] = the positions of src[p]'s nonzero elements (its free elements
    flattened) plus index_offset, then padding_val up to src's free size, then the count of nonzeros in the one
    extra last element. Every other partition of dst is left unmodified (GpSimd engine)."""
    source = on_chip(operand(src), 'nonzero_with_count')
    target = on_chip(operand(dst), 'nonzero_with_count')
    if target.free_size != source.free_size + 1:
        raise CompileError(f'nonzero_with_count: dst holds one more element per partition than src '
                           f'({source.free_size} + 1), got {target.free_size}')
    if target.shape[0] != source.shape[0]:
        raise CompileError(f'nonzero_with_count: src and dst have {source.shape[0]} and {target.shape[0]} '
                           'partitions')
    run = begin()
    kind = target.tensor.kind
    offset, padding = int(index_offset), int(padding_val)
    result = None
    if run.numerics:
        data = partition_rows(source.array())
        out = partition_rows(target.array()).astype(np.float64)
        for p in range(0, target.shape[0], GPSIMD_STRIDE):
            found = np.flatnonzero(data[p])
            out[p, :found.size] = found + offset
            out[p, found.size:-1] = padding
            out[p, -1] = found.size
        result = out.reshape(target.shape).astype(kind.storage)
    pending = issue(run, 'select', 'pool', [(source, None), (target, None)], target.shape, kind, result)
    assign(target, pending.tile)


def nc_n_gather(data: Any, indices: Any, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """Within each partition, out[p, j] = data[p, indices[p, j]] over data's flattened free elements (GpSimd)."""
    unapplied_mask('nisa.nc_n_gather', mask)
    source = on_chip(operand(data), 'nc_n_gather')
    index = on_chip(operand(indices), 'nc_n_gather')
    if index.shape[0] != source.shape[0]:
        raise CompileError(f'nc_n_gather: data and indices have {source.shape[0]} and {index.shape[0]} partitions')
    kind = kind_of(dtype) if dtype is not None else source.tensor.kind

    def gather(values: np.ndarray, picks: np.ndarray) -> np.ndarray:
        flat = partition_rows(values)
        positions = partition_rows(picks).astype(np.int64)
        if positions.size and (positions.min() < 0 or positions.max() >= flat.shape[1]):
            raise IndexError(f'nc_n_gather: an index is outside the {flat.shape[1]} elements of a partition')
        return np.take_along_axis(flat, positions, axis=1).reshape(picks.shape)
    return _issue('copy', 'pool', [source, index], index.shape, kind, gather)


def local_gather(src_buffer: Any, index: Any, num_elem_per_idx: Any = 1, num_valid_indices: Any = None,
                 dtype: Any = None, mask: Any = None, **kwargs: Any) -> Any:
    """The GpSimd gather within each core's 16 partitions (nki.isa.local_gather and the numpy semantics of its API
    example): core c reads its 16-partition slice of `index` flattened partition first (column by column), keeps
    the first `num_valid_indices` (all by default) and every partition p of the core gathers, for each kept index
    i, the `num_elem_per_idx` contiguous elements of its own src_buffer row from flat element i. The result is
    [P, num_valid_indices * num_elem_per_idx] per partition in that order (assigned to a destination of the same
    partitions and element count, e.g. [P, n_valid, n_elem])."""
    unapplied_mask('nisa.local_gather', mask)
    source = on_chip(operand(src_buffer), 'local_gather')
    picks = on_chip(operand(index), 'local_gather')
    partitions = source.shape[0]
    if picks.shape[0] != partitions or partitions % GPSIMD_STRIDE:
        raise CompileError(f'local_gather: src_buffer and index have {partitions} and {picks.shape[0]} partitions '
                           f'(the same multiple of {GPSIMD_STRIDE}: each GpSimd core serves 16 partitions)')
    if picks.tensor.kind.storage.kind not in 'iu':
        raise CompileError(f'local_gather: index must be an integer tile (uint16), got {picks.tensor.kind.public}')
    per_core = GPSIMD_STRIDE * picks.free_size
    elements = int(num_elem_per_idx)
    valid = per_core if num_valid_indices is None else int(num_valid_indices)
    if elements not in (1, 2, 4, 8, 16, 32):
        raise CompileError(f'local_gather: num_elem_per_idx is one of 1, 2, 4, 8, 16, 32, got {elements}')
    if not 0 < valid <= per_core:
        raise CompileError(f'local_gather: num_valid_indices {valid} must be between 1 and the {per_core} indices '
                           'of a core\'s 16-partition index slice')
    kind = kind_of(dtype) if dtype is not None else source.tensor.kind

    def gather(values: np.ndarray, positions: np.ndarray) -> np.ndarray:
        rows = partition_rows(values)
        starts = partition_rows(positions).astype(np.int64)
        out = np.empty((partitions, valid, elements), dtype=rows.dtype)
        for first in range(0, partitions, GPSIMD_STRIDE):
            core = starts[first:first + GPSIMD_STRIDE].flatten(order='F')[:valid]
            if core.size and (core.min() < 0 or core.max() + elements > rows.shape[1]):
                raise IndexError(f'local_gather: an index of the core at partition {first} reads outside the '
                                 f'{rows.shape[1]} elements of a partition')
            reach = core[:, None] + np.arange(elements)
            out[first:first + GPSIMD_STRIDE] = rows[first:first + GPSIMD_STRIDE][:, reach]
        return out.reshape(partitions, valid * elements)
    return _issue('copy', 'pool', [source, picks], (partitions, valid * elements), kind, gather)


# the permutation nki.isa.dma_transpose applies to a tile of each rank (its API page: the i-th axis of the result is
# axis axes[i] of src, and these are the supported axes)
DMA_TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def dma_transpose(src: Any, axes: Any = None, dtype: Any = None, mask: Any = None, dge_mode: Any = None,
                  **kwargs: Any) -> Any:
    """The transpose of src by the DMA engines into a new SBUF tile: [a, b] -> [b, a], [a, b, c] -> [c, b, a],
    [a, b, c, d] -> [d, b, c, a] (the last axis of src becomes the partition axis).

    `mask=` (the Beta 1 API page: "a compile-time constant predicate that controls whether/how this instruction is
    executed", NKI API Masking) is a predicate over src's index space, as on nl.load: only the source elements it
    keeps are read, and only their transposed positions of the result are written (the others keep what the
    destination held)."""
    if isinstance(src, GatherTransposeView):    # an index tile of several columns: this instruction's alone
        src.allowed = True
        try:
            view = operand(src)
        finally:
            src.allowed = False
    else:
        view = operand(src)
    rank = len(view.shape)
    if isinstance(view, IndirectView) and not view.scalar:
        _indirect_transpose_checks(view, dge_mode)
    elif dge_mode == 'hwdge':
        _hwdge_transpose_checks(view)
    elif dge_mode == 'swdge' and not isinstance(view, IndirectView):
        raise CompileError('dma_transpose: dge_mode=swdge of a static source; a static transpose takes dge_mode none, '
                           'hwdge or the compiler\'s choice (unknown), software DGE being the indirect transpose\'s '
                           '(NKI DGE reference, "How .ap() Affects DGE Mode")')
    if rank not in DMA_TRANSPOSE_AXES:
        raise CompileError(f'dma_transpose: src has {rank} dimensions; the transpose takes a 2-, 3- or 4-D tile')
    perm = DMA_TRANSPOSE_AXES[rank]
    if axes is not None and tuple(axes) != perm:
        raise CompileError(f'dma_transpose: axes={tuple(axes)} for a {rank}-D tile; the supported axes are (1, 0), '
                           '(2, 1, 0) and (3, 1, 2, 0), by rank')
    shape = tuple(view.shape[axis] for axis in perm)
    if shape[0] > PARTITION_LIMIT:
        raise CompileError(f'dma_transpose: the result has {shape[0]} partitions (at most {PARTITION_LIMIT})')
    run = begin()
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind
    window, where = mask_of(mask, view.shape)
    result = np.ascontiguousarray(view.array(window).transpose(perm)).astype(kind.storage) if run.numerics else None
    out_window = None if window is None else tuple(window[axis] for axis in perm)
    read = (view, window)
    index_reads = [(view.index, None)] if isinstance(view, IndirectView) else []    # the DMA reads the indices
    if not view.in_bounds:
        # a source past its tensor's end (`x[0:96]` of a 64-row x, no mask removing the excess), refused here: the
        # trn1 read below is a new view, which would carry no deferred check (a timing-only run accepted it)
        view.clip(window)
    if nc_version() < 3 and type(view) is View:
        # trn1 has no DMA transpose engine: the DMA moves the transpose element by element, as it does for
        # nl.load_transpose2d (traced with the source in the result's order: one element per descriptor). Traced
        # as a plain load, it cost a contiguous copy (8 MiB in 47 us against load_transpose2d's 454 us).
        read = (View(view.tensor, view.block, view.offset, shape, tuple(view.strides[axis] for axis in perm)),
                out_window)
    pending = issue(run, 'load' if not view.tensor.buffer.on_chip else 'dma_copy', 'dma', [read] + index_reads,
                    shape, kind, result, out_window)
    pending.where = None if where is None else np.ascontiguousarray(np.broadcast_to(where, view.shape).transpose(perm))
    pending.dma = 'load' if not view.tensor.buffer.on_chip else 'copy'
    # an indirect transpose is a trn2 (NeuronCore-v3) form, accepted under trn1 (docs/simulator.md, Known limits);
    # there it is timed as trn1's DMAs transpose, one element per descriptor
    pending.element_runs = nc_version() < 3 and isinstance(view, IndirectView)
    return pending.tile


def _hwdge_transpose_checks(view: View) -> None:
    """nki.isa.dma_transpose: "If hwdge, this instruction will be lowered to a Hardware DGE transpose. This has
    additional restrictions: src.shape[0] == 16, src.shape[-1] % 128 == 0, src.dtype is 2 bytes"."""
    for ok, rule in ((view.shape[0] == 16, 'src.shape[0] == 16'),
                     (view.shape[-1] % 128 == 0, 'src.shape[-1] % 128 == 0'),
                     (view.tensor.kind.itemsize == 2, 'src.dtype is 2 bytes')):
        if not ok:
            raise CompileError(f'dma_transpose with dge_mode=hwdge of a source of shape {view.shape} '
                               f'({view.tensor.kind.public}): "{rule}" (nki.isa.dma_transpose, DMA Direct Transpose '
                               'Constraints)')


def _indirect_transpose_checks(view: IndirectView, dge_mode: Any) -> None:
    """The nki.isa.dma_transpose page's "DMA Indirect Transpose Constraints" on a vector_offset source (a software
    DGE dma_gather_transpose)."""
    index = view.index
    columns = index.free_size
    checks = [
        (dge_mode in (None, 'unknown', 'swdge'),
         'the only valid dge_modes are unknown and swdge'),
        (len(view.shape) != 4 or view.shape[1] == 1 or view.shape[2] == 1,
         'when src is 4D: len(src[1]) or len(src[2]) must be 1'),
        (view.shape[-1] <= 128, 'src.shape[-1] <= 128'),
        (view.tensor.kind.itemsize == 2, 'src.dtype is 2 bytes'),
        (view.shape[0] % 16 == 0, 'src.shape[0] must be divisible by 16'),
        (16 <= index.shape[0] <= 128 and index.shape[0] % 16 == 0,
         'indices.shape[0] must be in [16, 128] and divisible by 16'),
        (columns == 1 or index.shape[0] == 128, 'when indices.shape[1] > 1: indices.shape[0] must be exactly 128'),
        (np.dtype(index.tensor.kind.storage) == np.uint32,
         'indices.dtype is np.uint32'),
    ]
    for ok, rule in checks:
        if not ok:
            raise CompileError(f'dma_transpose of an indirect (vector_offset) source of shape {view.shape} '
                               f'({view.tensor.kind.public}, indices {index.shape}): "{rule}" (nki.isa.dma_transpose, '
                               'DMA Indirect Transpose Constraints)')


def core_barrier(data: Any, cores: Any, engine: Any = unknown_engine, **kwargs: Any) -> None:
    """A barrier between the NeuronCores of a launch: the simulator runs programs in order, so it orders nothing
    more (and issues no instruction); the launch's reads of other programs' writes are no race (nki_sim/races.py)."""
    operand(data)
    run = current()
    if run.races is not None:
        run.races.barrier()


setattr(core_barrier, 'beta2_order', ('data', 'cores'))      # no destination in either form


def _segment_bounds(ids: np.ndarray) -> np.ndarray:
    """[2, n]: per element the start and the end (exclusive) index of its run of equal ids; padding (id 0) gets
    start n and end -1 (the NumPy equivalent on the nki.isa.sequence_bounds API page)."""
    n = ids.shape[0]
    starts = np.empty(n, dtype=np.float64)
    ends = np.empty(n, dtype=np.float64)
    for i in range(n):
        starts[i] = n if ids[i] == 0 else starts[i - 1] if i and ids[i] == ids[i - 1] else i
    for i in range(n - 1, -1, -1):
        ends[i] = -1 if ids[i] == 0 else ends[i + 1] if i < n - 1 and ids[i] == ids[i + 1] else i + 1
    return np.stack([starts, ends])


def sequence_bounds(segment_ids: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """[1, n] segment ids (float32 or int32, one partition) -> [1, 2, n]: the start and end index of the segment
    each element belongs to (nl.float32 or nl.int32; default the ids' dtype)."""
    view = on_chip(operand(segment_ids), 'sequence_bounds')
    if view.shape[0] != 1:
        raise CompileError(f'sequence_bounds: the segment ids have one partition ([1, n]), got {view.shape}')
    kind = kind_of(dtype) if dtype is not None else view.tensor.kind
    for k, what in ((view.tensor.kind, 'segment ids'), (kind, 'result')):
        if k.storage not in (np.float32, np.int32) or k.public not in (np.float32, np.int32):
            raise CompileError(f'sequence_bounds: the {what} are float32 or int32, not {k.public}')
    size = view.free_size

    def bounds(x: np.ndarray) -> np.ndarray:
        return _segment_bounds(partition_rows(x)[0])[None]
    return _issue('select', 'pool', [view], (1, 2, size), kind, bounds)

