"""Kernel programs: the nl/nisa call stream of one kernel invocation, recorded on shapes and replayed on data.

Recording (`record_program`, in the kernel's sandboxed process): the kernel runs in timing-only mode (it never
sees input data) while every public nl/nisa call and every tile operator (`dst[...] = t`, `+=`, `+`, ...,
`.broadcast_to`, `.reshape`) is written as one JSON line: the callee's name, its arguments encoded as values
(tensor/tile references by id, views by geometry (a view of a recorded tensor defined once in a `viewdef`
line and referred to by number), index expressions, masks, dtypes, buffers, engines, operator
functions by name, scalar immediates), the kernel line and the id given to its result.

Replaying (`Replay`, in a trusted process that never imports kernel code): the program's calls are executed
through the same simulator API on real inputs, so the numerics and the trace both come from the program. The
decoder is strict: unknown callees, unknown value kinds, bad ids, wrong input shapes or out-of-range views raise
`ProgramError`; exceptions of the simulator itself surface as they would for a kernel.
"""
import functools
import json
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
import re
import types
from typing import IO, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import compute, isa, isa_select, isa_topk, language, memory, runtime
from .affine import Affine, Predicate, index_as_value
from .call_forms import normalized
from .dtypes import LowPrecisionType, NumericType, PackedMxType, kind_of
from .errors import CompileError
from .indirect import (INDEX_PARTITIONS, DynamicRunsView, DynamicView, GatherTransposeView, IndirectView,
                       dynamic_reach_ok, index_tile)
from .jit import RunObserver, argument_leaves, as_outputs, check_fresh, simulate
from .loops import FirstIndex, LoopIndex
from .operands import Engine
from .placement import Placement
from .races import WriteRaces
from .ops import NUMPY_ACTIVATION, NUMPY_ALU
from .tensors import Tensor, hbm_tensor, par_dim, shape_only_input
from .tile_ops import EXECUTION
from .trace import TraceRecorder
from .views import OutOfRangePattern, View, extent

FORMAT = 'accelopt-program 1'

# Not program calls: functions that compute Python values for the kernel (shapes, ids, iterators, index
# expressions; their results reach the program only as immediates) and the execution layer's helpers that nl
# re-exports for nisa (a program may not call them directly).
_NOT_RECORDED = {'finfo', 'iinfo', 'static_cast', 'program_id', 'num_programs', 'program_ndim', 'spmd_dim', 'nc',
                 'device_print', 'affine_range', 'sequential_range', 'static_range', 'arange', 'ds', 'mgrid',
                 'is_first_iteration', 'all_first', 'get_nc_version', 'kind_of', 'element_count', 'free_elements',
                 'elementwise', 'reduce', 'full_tile', 'reshape_view', 'deterministic_dropout'}
_API_MODULES = {'nl': (language.__name__, compute.__name__),
                'nisa': (isa.__name__, isa_select.__name__, isa_topk.__name__)}
_TILE_OPERATORS = ('assign', 'accumulate', 'binary', 'negate', 'broadcast_to', 'reshape', 'indirect', 'bitcast',
                   'astype')


class ProgramError(Exception):
    """A malformed program: unknown callee or value kind, bad id, wrong inputs, out-of-range access."""


def _api() -> Dict[str, Callable[..., Any]]:
    """Every recordable callee by its program name (nl.*, nisa.*, op.*)."""
    table: Dict[str, Callable[..., Any]] = {}
    for prefix, module in (('nl', language), ('nisa', isa)):
        for name, value in vars(module).items():
            if isinstance(value, types.FunctionType) and not name.startswith('_') and name not in _NOT_RECORDED \
                    and value.__module__ in _API_MODULES[prefix]:
                table[f'{prefix}.{name}'] = value
    for name in _TILE_OPERATORS:
        table[f'op.{name}'] = getattr(EXECUTION, name)
    return table


def _functions() -> Dict[str, Any]:
    """Operator/activation function arguments (op=, op0=, reduce_op=...) by name."""
    named: Dict[str, Any] = {}
    for prefix, module in (('nl', language), ('nisa', isa)):
        for name, value in vars(module).items():
            if callable(value) and (hasattr(value, 'alu') or hasattr(value, 'activation')):
                named[f'{prefix}.{name}'] = value
    numpy_functions = set(NUMPY_ALU) | set(NUMPY_ACTIVATION)
    for name in dir(np):
        value = getattr(np, name)
        if any(value is f for f in numpy_functions):
            named.setdefault(f'np.{name}', value)
    return named


_OUTPUT_BUFFERS = (memory.shared_hbm, memory.hbm, memory.private_hbm)    # where a returned tensor can live
_BUFFERS = {b.name: b for b in (memory.sbuf, memory.psum, memory.hbm, memory.shared_hbm, memory.private_hbm,
                                memory.constant_hbm)}
_ENGINES = {e.name: e for e in vars(isa).values() if isinstance(e, Engine)}
_LOW_PRECISION = {t.name: t for t in vars(language).values() if isinstance(t, LowPrecisionType)}


# ----- recording -----
class Recorder:
    """Writes the program of one timing-only kernel run to `out` (one JSON object per line)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        # recorded tensor or view -> its reference number. Keyed by the object itself, not id(): tiles hash by
        # identity and a dict tests a key's identity before its (elementwise) ==, which is never reached since two
        # live objects never share an identity hash; and builtins.id is an audited event, which step A's guard
        # hook would see a million times for a large kernel
        self.ids: Dict[Any, int] = {}
        self.depth = 0
        # the observer of the run being recorded; a kernel the module's host code runs while it is imported (the
        # nki.simulate Quick Start checks its kernel so: `nki.simulate(add_kernel)(a, b)` at module level) runs
        # under a Run of its own, whose calls are not the program's
        self.observer: Optional[RunObserver] = None
        self.scope: Any = ()
        self.affine: Any = ()       # the affine_range context last written (an `affine` entry)
        self.function_names = {id(f): name for name, f in _functions().items()}
        # (tensor ref, block, offset, geometry number) -> view number (_view_key)
        self.view_numbers: Dict[Tuple[Any, ...], int] = {}
        # (shape, strides, index_map, in_bounds, tensor_indexed) -> geometry number, in order of first use
        self.geometry_numbers: Dict[Tuple[Any, ...], int] = {}
        # id(index map) -> [index map, shape, strides, in_bounds, tensor_indexed, geometry number, their text or
        # None] of the last view seen with that index map object (_geometry)
        self.geometries: Dict[int, List[Any]] = {}
        self.key_texts: Dict[str, str] = {}
        self.constant_texts: Dict[int, Tuple[Any, str]] = {}
        self.fast_text: Dict[type, Callable[[Any], str]] = {
            type(None): _null_text, bool: _bool_text, int: int.__repr__, float: _float_text,
            str: encode_basestring_ascii, View: self._view_text, Tensor: self._tensor_text,
            tuple: self._sequence_text, list: self._sequence_text, Affine: self._affine_text,
            LoopIndex: _loop_text, FirstIndex: _loop_text}
        for scalar in _NUMPY_SCALARS:
            self.fast_text[scalar] = self._numpy_scalar_text

    def write(self, entry: Dict[str, Any]) -> None:
        self.out.write(_ENCODE(entry) + '\n')

    def register(self, value: Any) -> Any:
        if isinstance(value, (Tensor, View)):
            if value not in self.ids:
                self.ids[value] = len(self.ids)
            return self.ids[value]
        if isinstance(value, (tuple, list)):
            return [self.register(v) for v in value]
        return None

    def wrap(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        prefix = '{"c":' + _ENCODE(name) + ',"a":['
        text = self.text
        key_text = self.key_text
        key_texts = self.key_texts
        ids = self.ids
        out = self.out
        # normalized() leaves calls of a function without Beta 2 call forms as they are
        beta2_forms = bool(getattr(function, 'beta2_order', None)) or bool(getattr(function, 'dst_first', False)) \
            or bool(getattr(function, 'beta2_positional', None)) \
            or bool(getattr(function, 'beta2_positional_for', None))

        @functools.wraps(function)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if self.depth:
                return function(*args, **kwargs)
            run = runtime.RUN
            if run is None:
                run = runtime.current()     # raises
            if run.observer is not self.observer:   # a run of the kernel module's host code (see `observer`)
                return function(*args, **kwargs)
            scope = run.reuse_scope
            if scope is not self.scope and scope != self.scope:
                self.scope = scope
                self.write({'scope': scope})
            if run.affine_context is not self.affine:
                self.note_affine(run.affine_context)
            if beta2_forms and run.beta2:     # (normalized() changes nothing in a Beta 1 run)
                args, kwargs = normalized(function, args, kwargs)
            line = run.line(1)     # from the caller of this wrapper on
            # the entry {"c", "a", "k", "l", "r"} as JSON text, encoded before the call (as _ENCODE would write it)
            head = ''.join((prefix, ','.join(map(text, args)), '],"k":{',
                            ','.join([(key_texts.get(k) or key_text(k)) + ('null' if v is None else 'true' if v is True
                                                                         else 'false' if v is False else text(v))
                                      for k, v in kwargs.items()]),
                            '},"l":', str(line), ',"r":'))
            self.depth += 1
            # the call's instructions and allocations take the line it is recorded with (as in the replay),
            # without another walk up the stack
            run.fixed_line = line
            try:
                result = function(*args, **kwargs)
            finally:
                self.depth -= 1
                run.fixed_line = None
            if type(result) is Tensor:      # an instruction's tile (register(), inline)
                registered = ids.get(result)
                if registered is None:
                    registered = ids[result] = len(ids)
                out.write(''.join((head, str(registered), '}\n')))
                return result
            registered = self.register(result)
            out.write(''.join((head, 'null' if registered is None else str(registered) if type(registered) is int
                               else _ENCODE(registered), '}\n')))
            return result
        self.function_names[id(recorded)] = self.function_names.get(id(function), name)
        return recorded

    def note_affine(self, context: Any) -> None:
        """The affine_range iterations the next entries run in, written when they changed: the replay checks write
        conflicts between iterations in it (trace.settle_write)."""
        if context != self.affine:
            self.out.write(''.join(('{"affine":[', ','.join(['[%d,%d]' % pair for pair in context]), ']}\n')))
        self.affine = context

    def key_text(self, key: str) -> str:
        """A keyword argument's name as the JSON text of an object key ("name":)."""
        found = self.key_texts.get(key)
        if found is None:
            found = self.key_texts[key] = _ENCODE(str(key)) + ':'
        return found

    def text(self, value: Any) -> str:
        """`_ENCODE(self.encode(value))`, with fast paths for the common value types (exact types only) and the
        encodings of constant objects (buffers, engines, dtypes, functions) kept."""
        fast = self.fast_text.get(type(value))
        if fast is not None:
            return fast(value)
        known = self.constant_texts.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        encoded = _ENCODE(self.encode(value))
        if isinstance(value, _CONSTANT_TYPES):
            self.constant_texts[id(value)] = (value, encoded)   # kept alive: its id stays its own
        return encoded

    def _view_text(self, value: View) -> str:
        ids = self.ids
        ref = ids.get(value)
        if ref is not None:
            return '{"ref":%d}' % ref
        ref = ids.get(value.tensor)
        if ref is None:
            return _ENCODE(self._encode_view(value))
        index_map = value.index_map
        geometry = self.geometries.get(id(index_map))
        try:    # as _encode_view numbers it
            if geometry is None or geometry[0] is not index_map or geometry[1] is not value.shape \
                    or geometry[2] is not value.strides or geometry[3] is not value.in_bounds \
                    or geometry[4] is not value.tensor_indexed:
                geometry = self._geometry(value)
            key = (ref, value.block, value.offset, geometry[5])
            number = self.view_numbers.get(key)
        except TypeError:
            return _ENCODE(self._encode_view(value))
        if number is None:
            number = self.view_numbers[key] = len(self.view_numbers)
            self.out.write(''.join(('{"viewdef":', str(number), ',"of":{"view":{"ref":', str(ref), '},',
                                    self._geometry_text(value, geometry), '}}\n')))
        return '{"vref":%d}' % number

    def _geometry(self, value: View) -> List[Any]:
        """The numbered geometry of a view besides its tensor, block and offset (TypeError when unhashable).
        Views of one subscript share their shape, strides and index map objects (tensors.py memoises them), so
        the number is kept per index map object and reused only for the very same objects."""
        fields = (value.shape, value.strides, value.index_map, value.in_bounds, value.tensor_indexed)
        number = self.geometry_numbers.get(fields)
        if number is None:
            number = self.geometry_numbers[fields] = len(self.geometry_numbers)
        geometry: List[Any] = [value.index_map, value.shape, value.strides, value.in_bounds, value.tensor_indexed,
                               number, None]
        self.geometries[id(value.index_map)] = geometry     # keeps the index map alive: its id stays its own
        return geometry

    def _view_key(self, ref: int, value: View) -> Tuple[Any, ...]:
        """The key of a view of recorded tensor `ref` in view_numbers (TypeError when unhashable)."""
        return (ref, value.block, value.offset, self._geometry(value)[5])

    def _geometry_text(self, value: View, geometry: List[Any]) -> str:
        """_ENCODE_FIELDS of a view's geometry; the text of its shape, strides and index map is kept with its
        numbered geometry, an int block and offset are written inline."""
        block, offset = value.block, value.offset
        if type(offset) is not int or type(block) is not tuple or any([type(b) is not int for b in block]):
            return _ENCODE_FIELDS((block, offset, value.shape, value.strides, value.index_map, value.in_bounds,
                                   value.tensor_indexed))
        text = geometry[6]
        if text is None:
            text = geometry[6] = _ENCODE_FIELDS((block, offset, value.shape, value.strides, value.index_map,
                                                 value.in_bounds, value.tensor_indexed)).split(',"shape":', 1)[1]
        return ''.join(('"block":[', ','.join([str(b) for b in block]), '],"offset":', str(offset), ',"shape":',
                        text))

    def _tensor_text(self, value: Tensor) -> str:
        ref = self.ids.get(value)
        if ref is not None:
            return '{"ref":%d}' % ref
        return _ENCODE(self.encode(value))

    def _sequence_text(self, value: Any) -> str:
        text = self.text
        return ''.join(('{"tuple":[' if type(value) is tuple else '{"list":[', ','.join([text(v) for v in value]),
                        ']}'))

    def _numpy_scalar_text(self, value: Any) -> str:
        item = value.item()
        return ''.join(('{"np":"', _NUMPY_NAMES[type(value)], '","v":', self.fast_text[type(item)](item), '}'))

    def _affine_text(self, value: Affine) -> str:
        if type(value.c) is int and type(value.ndim) is int and value.grid is None and \
                all(len(t) == 3 and all(type(x) is int for x in t) for t in value.terms):
            return '{"affine":[%d,[%s],%d]}' % (value.c, ','.join(['[%d,%d,%d]' % tuple(t) for t in value.terms]),
                                                 value.ndim)
        return _ENCODE(self.encode(value))

    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, LoopIndex):
            return {'loop': int(value), 'first': bool(value.first)}
        if isinstance(value, (int, float)):
            return value
        if isinstance(value, (Tensor, View)) and value in self.ids:
            return {'ref': self.ids[value]}
        if isinstance(value, IndirectView):
            encoded = {'indirect': self.encode(View(value.tensor, value.block, value.offset, value.shape,
                                                    value.strides)),
                       'index': self.encode(value.index), 'row_stride': value.row_stride, 'rows': value.rows,
                       'scalar': value.scalar}
            if isinstance(value, DynamicRunsView):
                encoded['runs'] = value.axis
            elif isinstance(value, DynamicView) and value.pattern:
                encoded['pattern'] = True
            return encoded
        if isinstance(value, View):
            return self._encode_view(value)
        if isinstance(value, Tensor):
            canonical = value.hbm_alloc.canonical if value.hbm_alloc is not None else None
            if canonical is not None and canonical in self.ids:
                return {'hbm_reshape': self.ids[canonical], 'shape': list(value.shape)}
            raise CompileError('a tensor that no recorded NKI call created was passed to an NKI call')
        if isinstance(value, np.generic):
            return {'np': value.dtype.name, 'v': value.item()}
        if isinstance(value, Affine):
            spec = [value.c, [list(t) for t in value.terms], value.ndim]
            return {'affine': spec + [list(value.grid)] if value.grid is not None else spec}
        if isinstance(value, Predicate):
            return {'pred': [[self.encode(a), kind] for a, kind in value.atoms]}
        if isinstance(value, memory.Buffer):
            return {'buffer': value.name}
        if isinstance(value, Placement):        # direct allocation: checked in this run only (nki_sim/placement.py)
            return {'buffer': value.buffer.name}
        if isinstance(value, Engine):
            return {'engine': value.name}
        if isinstance(value, LowPrecisionType):
            return {'dtype': value.name}
        if isinstance(value, NumericType):
            return {'dtype': value.name}
        if isinstance(value, np.dtype) and value.metadata and value.metadata.get('nki') in _LOW_PRECISION:
            return {'dtype': value.metadata['nki']}
        if isinstance(value, type) and issubclass(value, np.generic) or isinstance(value, np.dtype):
            return {'dtype': np.dtype(value).name}
        if isinstance(value, par_dim):
            return {'par_dim': value.size}
        if isinstance(value, slice):
            return {'slice': [self.encode(value.start), self.encode(value.stop), self.encode(value.step)]}
        if value is Ellipsis:
            return {'ellipsis': True}
        if isinstance(value, (tuple, list)):
            return {'tuple' if isinstance(value, tuple) else 'list': [self.encode(v) for v in value]}
        if isinstance(value, np.ndarray):
            return {'array': value.dtype.name, 'shape': list(value.shape), 'data': value.reshape(-1).tolist()}
        if callable(value) and id(value) in self.function_names:
            return {'fn': self.function_names[id(value)]}
        refuse = getattr(type(value), 'refuse_as_nki_value', None)
        if refuse is not None:      # a value that names why it is no NKI value (protocol/host_frameworks.py)
            refuse(value)
        if callable(value):
            name = f"{getattr(value, '__module__', None) or ''}.{getattr(value, '__name__', type(value).__name__)}"
            raise CompileError(f'{name.lstrip(".")} is not an ALU operator or activation function the simulator '
                               'supports (docs/simulator.md lists them)')
        if isinstance(value, OutOfRangePattern):
            raise CompileError(value.message)
        if isinstance(value, PackedMxType):
            kind_of(value)          # raises, naming MX as the cause
        why = index_as_value(value)
        if why is not None:
            raise CompileError(why)
        raise CompileError(f'cannot pass a {type(value).__name__} to an NKI call')

    def _encode_view(self, value: View) -> Dict[str, Any]:
        """A view of a recorded tensor is defined once (a `viewdef` line) and then referred to by number: a
        kernel's loops pass the same views again and again."""
        key = None
        ref = self.ids.get(value.tensor)
        if ref is not None:
            try:
                key = self._view_key(ref, value)
                number = self.view_numbers.get(key)
            except TypeError:  # unhashable geometry (lists): not shared
                key = None
            else:
                if number is not None:
                    return {'vref': number}
        # tuples are encoded as lists
        encoded = {'view': self.encode(value.tensor), 'block': value.block, 'offset': value.offset,
                   'shape': value.shape, 'strides': value.strides, 'index_map': value.index_map,
                   'in_bounds': value.in_bounds, 'tensor_indexed': value.tensor_indexed}
        if key is None:
            return encoded
        number = self.view_numbers[key] = len(self.view_numbers)
        self.write({'viewdef': number, 'of': encoded})
        return {'vref': number}


def _core_split(value: Any) -> Any:
    """The (grid axis, cores) of an SPMD entry spread over NeuronCores (`nc`), or None."""
    if value is None:
        return None
    split = _int_tuple(value, 'nc')
    if len(split) != 2 or split[0] < 0 or split[1] != 2:
        raise ProgramError(f'bad core split {value!r}: expected [grid axis, 2]')
    return split


def _plain_number(value: Any) -> Any:
    """numpy integers/floats inside view geometry or index expressions, as JSON numbers."""
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    raise TypeError(f'cannot record a {type(value).__name__}')


# json.JSONEncoder(separators=(',', ':'), default=_plain_number).encode, without building a new C encoder for
# every value (no circular-reference check: encoded values come from Recorder.encode, which recursion-limits them)
_C_ENCODER = c_make_encoder(None, _plain_number, encode_basestring_ascii, None, ':', ',', False, False, True)


def _ENCODE(value: Any) -> str:
    return ''.join(_C_ENCODER(value, 0))


def _ENCODE_FIELDS(geometry: Tuple[Any, ...]) -> str:
    """The fields of a view definition after "view" (_encode_view's order), as JSON object members."""
    return ''.join(_C_ENCODER(dict(zip(_VIEW_FIELDS, geometry)), 0))[1:-1]


_VIEW_FIELDS = ('block', 'offset', 'shape', 'strides', 'index_map', 'in_bounds', 'tensor_indexed')


_FLOAT_REPR = float.__repr__
_INFINITY = float('inf')
# values whose encoding never changes (Recorder.text keeps it by identity)
_CONSTANT_TYPES = (memory.Buffer, Engine, LowPrecisionType, NumericType, np.dtype, type, types.FunctionType,
                   types.BuiltinFunctionType, np.ufunc)
# numpy scalar types encoded as {"np": dtype name, "v": item} whose item() is a bool, int or float
_NUMPY_SCALARS = (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                  np.uint32, np.uint64, np.bool_)
_NUMPY_NAMES = {scalar: np.dtype(scalar).name for scalar in _NUMPY_SCALARS}


def _null_text(value: Any) -> str:
    return 'null'


def _bool_text(value: bool) -> str:
    return 'true' if value else 'false'


def _float_text(value: float) -> str:
    if -_INFINITY < value < _INFINITY:
        return _FLOAT_REPR(value)
    return _ENCODE(value)   # NaN, Infinity


def _loop_text(value: LoopIndex) -> str:
    return '{"loop":%d,"first":%s}' % (value, 'true' if value.first else 'false')


class _Observer(RunObserver):
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        recorder.observer = self

    def start(self, kernel_name: str, grid: Tuple[int, ...], inputs: List[Any], beta2: bool = False) -> None:
        declared = [[list(v.shape), v.kind.public.name if isinstance(v.kind.public, np.dtype) else str(v.kind.public)]
                    for v in argument_leaves(inputs) if isinstance(v, Tensor)]
        header: Dict[str, Any] = {'program': FORMAT, 'kernel': kernel_name, 'grid': list(grid), 'inputs': declared}
        if beta2:                   # a Beta 2 kernel: integer tensor_tensor defaults to GpSimd in the replay
            header['beta2'] = True
        self.recorder.write(header)
        for value in argument_leaves(inputs):
            if isinstance(value, Tensor):
                self.recorder.register(value)

    def program(self, ids: Tuple[int, ...], ordinal: int = 0, core_split: Any = None) -> None:
        self.recorder.note_affine(runtime.current().affine_context)
        entry: Dict[str, Any] = {'spmd': list(ids)}
        if ordinal:
            entry['ordinal'] = ordinal
        if core_split is not None:
            entry['nc'] = list(core_split)
        self.recorder.write(entry)

    def launch_end(self, ids: Tuple[int, ...], core_split: Any = None) -> None:
        self.recorder.note_affine(runtime.current().affine_context)
        entry: Dict[str, Any] = {'spmd_end': list(ids)}
        if core_split is not None:
            entry['nc'] = list(core_split)
        self.recorder.write(entry)

    def finish(self, returned: Any) -> None:
        self.recorder.note_affine(runtime.current().affine_context)
        self.recorder.write({'return': self.recorder.encode(returned)})


class Recording:
    """While active, every public nl/nisa function and tile operator records its calls into `recorder`.
    Enter it before the kernel module is imported (so `from ...language import add` binds the recording
    function)."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.saved: List[Tuple[Any, str, Any]] = []

    def __enter__(self) -> 'Recording':
        for name, function in _api().items():
            prefix, short = name.split('.', 1)
            owner: Any = EXECUTION if prefix == 'op' else language if prefix == 'nl' else isa
            self.saved.append((owner, short, vars(owner)[short]))
            wrapped = self.recorder.wrap(name, function)
            setattr(owner, short, staticmethod(wrapped) if owner is EXECUTION else wrapped)
        return self

    def __exit__(self, *exc: Any) -> None:
        for owner, short, original in reversed(self.saved):
            setattr(owner, short, original)
        self.saved = []


def record_program(kernel: Any, args: Sequence[Any], recorder: Recorder) -> int:
    """Run `kernel` shapes-only on `args` (arrays become shape-only inputs), recording its program; returns the
    number of instructions. No trace is made and the instructions are not checked: the replay traces and checks
    the program (its errors name the instruction's kernel line). The caller holds a `Recording` open around kernel
    import and this call. Kernel errors propagate."""
    _, checker = simulate(kernel, args, timing_only=True, observer=_Observer(recorder), traced=False)
    return checker.count


# ----- replaying -----
_NUMERIC_DTYPES = {'bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float16',
                   'float32', 'float64'}
_KERNEL_NAME_CHARS = set('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-')
MAX_CONSTANT_ELEMENTS = 1 << 22


def _numeric_dtype(name: Any) -> np.dtype:
    if not isinstance(name, str) or name not in _NUMERIC_DTYPES:
        raise ProgramError(f'unknown dtype {name!r}')
    return np.dtype(name)


def _input_format(name: Any) -> str:
    """An input declaration's dtype name: a numpy dtype or an NKI format numpy lacks (bfloat16, fp8, ...)."""
    if not isinstance(name, str) or name not in _NUMERIC_DTYPES and name not in _LOW_PRECISION:
        raise ProgramError(f'unknown input dtype {name!r}')
    return name


def _int(value: Any, what: str) -> int:
    if type(value) is not int:
        raise ProgramError(f'{what} must be an integer, not {value!r}')
    return value


def _int_tuple(value: Any, what: str) -> Tuple[int, ...]:
    if not isinstance(value, list):
        raise ProgramError(f'{what} must be a list of integers')
    for v in value:
        if type(v) is not int:
            raise ProgramError(f'{what} must be an integer, not {v!r}')
    return tuple(value)


class Program:
    """A program: its header, then its entries (calls, view definitions, SPMD starts, the return) as a list or
    as an iterator still being read (read_program)."""

    def __init__(self, header: Dict[str, Any], entries: Iterable[Dict[str, Any]]):
        self.header = header
        self.entries = entries
        name = header.get('kernel')
        if not isinstance(name, str) or not name or not set(name) <= _KERNEL_NAME_CHARS:
            raise ProgramError(f'bad kernel name {name!r}')
        self.kernel_name = name
        self.grid = _int_tuple(header.get('grid', []), 'grid')
        self.beta2 = header.get('beta2', False)
        if type(self.beta2) is not bool:
            raise ProgramError(f'bad beta2 {self.beta2!r}')
        inputs = header.get('inputs')
        if not isinstance(inputs, list):
            raise ProgramError('the header lacks the input declarations')
        self.inputs = []
        for item in inputs:
            if not isinstance(item, list) or len(item) != 2:
                raise ProgramError(f'bad input declaration {item!r}')
            self.inputs.append((_int_tuple(item[0], 'input shape'), _input_format(item[1])))


# json.loads without its per-call wrapper: the C scanner of a default decoder (a line it does not take whole goes
# through json.loads)
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


# The largest program step B reads (characters; the recorder writes ASCII): a bigger one is the kernel's failure.
MAX_PROGRAM_CHARS = 1 << 30


# The formats the low-precision ban refuses (protocol: --ban-low-precision).
# Every format below float32 (the low-precision ban): float16 and the NKI formats numpy lacks (bfloat16, tfloat32,
# the float8 formats).
LOW_PRECISION_FORMATS = frozenset({'float16'} | set(_LOW_PRECISION))


class BannedFormat(Exception):
    """A dtype of the banned formats met while compiling the program (Replay turns it into a CompileError)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class RecordedFailure(Exception):
    """Step A's failure entry ({"error": ...}), met while reading the program. Its contents are untrusted: the
    caller turns it into a non-OK verdict (protocol/replay.py)."""

    def __init__(self, entry: Any) -> None:
        super().__init__('the kernel failed while its program was recorded')
        self.entry = entry


def read_program(lines: Iterable[str], max_chars: int = MAX_PROGRAM_CHARS) -> Program:
    """The program with its header read now and its entries read lazily, as the replay reaches them: `lines` may
    be a stream that step A is still writing. A step-A failure entry raises RecordedFailure where it is read
    (here, if it precedes the header); a malformed line raises ProgramError."""
    items = _decoded_lines(lines, max_chars)
    for header in items:    # (_decoded_lines checks that the first entry is a header)
        return Program(header, items)
    raise ProgramError('empty program: the kernel produced no instruction stream')


def parse_program(lines: Iterable[str]) -> Program:
    """The whole program read at once (a list of entries)."""
    program = read_program(lines)
    program.entries = list(program.entries)
    return program


def _decoded_lines(lines: Iterable[str], max_chars: int) -> Iterator[Any]:
    """The entry of each non-blank line, the first of which must be the header (else ProgramError); an error entry
    raises RecordedFailure."""
    geometries: Dict[str, Optional[Dict[str, Any]]] = {}
    keywords: Dict[str, Optional[Dict[str, Any]]] = {}
    header_read = False
    size = 0
    for number, text in enumerate(lines, 1):
        size += len(text)
        if size > max_chars:
            raise RecordedFailure({'verdict': 'RUNTIME_ERROR', 'line': 0,
                                   'message': f"the kernel's program exceeds {max_chars >> 20} MiB"})
        if not text or text.isspace():    # (not text.strip(), without copying the line)
            continue
        if header_read:
            if text.startswith('{"c":"'):
                call = _call_line(text, keywords)
                if call is not None:
                    yield call
                    continue
            elif text.startswith('{"viewdef":'):
                view = _view_definition(text, geometries)
                if view is not None:
                    yield view
                    continue
            elif text.startswith('{"affine":'):
                context = _affine_line(text)
                if context is not None:
                    yield context
                    continue
        try:
            entry, end = _SCAN(text, 0)
            if end != len(text) and text[end:] != '\n':
                raise ValueError
        except (StopIteration, ValueError, RecursionError):
            # anything else (leading whitespace, trailing data, not JSON): exactly as json.loads decides
            try:
                entry = json.loads(text)
            except ValueError as failure:
                raise ProgramError(f'program line {number} is not JSON: {failure}') from None
            except RecursionError:
                raise ProgramError(f'program line {number} nests too deeply') from None
        if not isinstance(entry, dict):
            raise ProgramError(f'program line {number} is not an object')
        if 'error' in entry:
            if not isinstance(entry['error'], dict):
                raise ProgramError(f'program line {number}: bad error entry')
            raise RecordedFailure(entry['error'])
        if not header_read and entry.get('program') != FORMAT:
            raise ProgramError(f'program line {number}: expected the header {FORMAT!r}')
        header_read = True
        yield entry


# A view definition as the recorder writes it, up to its geometry: view number, tensor reference, int block and
# offset (JSON integers exactly as the decoder reads them: no leading zeros, no fraction or exponent).
_VIEWDEF_HEAD = re.compile(r'\{"viewdef":(0|[1-9][0-9]*),"of":\{"view":\{"ref":(0|[1-9][0-9]*)\},'
                           r'"block":\[((?:0|[1-9][0-9]*)(?:,(?:0|[1-9][0-9]*))*)?\],"offset":(-?(?:0|[1-9][0-9]*)),'
                           r'"shape":')
_GEOMETRY_KEYS = frozenset(('shape', 'strides', 'index_map', 'in_bounds', 'tensor_indexed'))


def _view_definition(text: str, geometries: Dict[str, Optional[Dict[str, Any]]]) -> Optional[Dict[str, Any]]:
    """The entry of a `viewdef` line in the recorder's own spelling, or None (then it is parsed as any line).
    A program repeats the text of a view's geometry (its members from "shape" to the end of the line) for every
    block and offset of one subscript: that text is decoded once, and the entries that repeat it share the
    decoded values (never modified; Replay._view validates them once). The result is what json.loads makes of
    the line: the head is matched exactly, and the geometry text, closed as an object of its own, must decode
    whole to exactly the five geometry members, so the line's object closes right after it."""
    match = _VIEWDEF_HEAD.match(text)
    if match is None:
        return None
    rest = text[match.end():]
    if rest not in geometries:
        geometries[rest] = None
        body = rest[:-3] if rest.endswith('}}\n') else rest[:-2] if rest.endswith('}}') else None
        if body is not None:
            closed = '{"shape":' + body + '}'
            try:
                members, end = _SCAN(closed, 0)
            except (StopIteration, ValueError):
                members, end = None, 0
            if end == len(closed) and isinstance(members, dict) and members.keys() == _GEOMETRY_KEYS:
                geometries[rest] = members
    geometry = geometries[rest]
    if geometry is None:
        return None
    number, ref, block, offset = match.groups()
    of = {'view': {'ref': int(ref)}, 'block': [int(b) for b in block.split(',')] if block else [],
          'offset': int(offset)}
    of.update(geometry)
    return {'viewdef': int(number), 'of': of}


class CallLine:
    """The entry of a call line in the recorder's own spelling whose arguments are all references (`{"ref": n}`,
    `{"vref": n}`): what json.loads makes of the line, in the form Replay compiles without decoding the arguments
    as objects. `keywords` is the decoded "k" object, shared by the lines that spell it alike (never modified)."""
    __slots__ = ('name', 'arguments', 'keywords_text', 'keywords', 'line')

    def __init__(self, name: str, arguments: List[int], keywords_text: str, keywords: Dict[str, Any],
                 line: int) -> None:
        self.name = name
        self.arguments = arguments      # per argument: n for {"ref": n}, ~n (-n - 1) for {"vref": n}
        self.keywords_text = keywords_text
        self.keywords = keywords
        self.line = line

    def entry(self) -> Dict[str, Any]:
        """The entry as json.loads decodes it (the result id left out: the replay numbers results itself)."""
        return {'c': self.name, 'a': [{'vref': ~n} if n < 0 else {'ref': n} for n in self.arguments],
                'k': self.keywords, 'l': self.line}


class AffineLine:
    """The entry of an `affine` line in the recorder's own spelling: the affine_range context as a tuple of
    (loop, index) pairs."""
    __slots__ = ('context',)

    def __init__(self, context: Tuple[Tuple[int, int], ...]) -> None:
        self.context = context

    def entry(self) -> Dict[str, Any]:
        """The entry as json.loads decodes it."""
        return {'affine': [list(pair) for pair in self.context]}


# An affine line as the recorder writes it (non-negative JSON integers exactly as the decoder reads them; anything
# else, a negative loop index among them, goes through the JSON decoder)
_AFFINE_PAIR = r'\[(?:0|[1-9][0-9]*),(?:0|[1-9][0-9]*)\]'
_AFFINE_LINE = re.compile(r'\{"affine":\[(?:%s(?:,%s)*)?\]\}\n?\Z' % (_AFFINE_PAIR, _AFFINE_PAIR))


def _affine_line(text: str) -> Optional[AffineLine]:
    """The AffineLine of an `affine` line in the recorder's spelling, or None (then it is parsed as any line)."""
    if _AFFINE_LINE.match(text) is None:
        return None
    return AffineLine(tuple(map(tuple, _SCAN(text, 0)[0]['affine'])))  # type: ignore[arg-type]


# A call line as the recorder writes it with only references as arguments: callee name, the arguments, the keywords
# object's text, the line and the result id (JSON integers exactly as the decoder reads them).
_CALL_LINE = re.compile(r'\{"c":"([A-Za-z0-9_.]+)","a":\[((?:\{"v?ref":(?:0|[1-9][0-9]*)\})'
                        r'(?:,\{"v?ref":(?:0|[1-9][0-9]*)\})*)?\],"k":(\{.*\}),"l":(0|[1-9][0-9]*),'
                        r'"r":(?:null|0|[1-9][0-9]*)\}\n?\Z')


def _call_line(text: str, keywords: Dict[str, Optional[Dict[str, Any]]]) -> Optional[CallLine]:
    """The CallLine of a call line in the recorder's spelling with only references as arguments, or None (then it
    is parsed as any line). The keywords text must decode whole to an object (decoded once per distinct text), so
    the line is exactly the object {"c", "a", "k", "l", "r"}."""
    match = _CALL_LINE.match(text)
    if match is None:
        return None
    name, arguments, keywords_text, line = match.groups()
    if keywords_text not in keywords:
        keywords[keywords_text] = None
        try:
            decoded, end = _SCAN(keywords_text, 0)
        except (StopIteration, ValueError, RecursionError):
            decoded, end = None, 0
        if end == len(keywords_text) and isinstance(decoded, dict):
            keywords[keywords_text] = decoded
    decoded = keywords[keywords_text]
    if decoded is None:
        return None
    return CallLine(name, [~int(a[8:-1]) if a[2] == 'v' else int(a[7:-1]) for a in arguments.split(',')]
                    if arguments else [], keywords_text, decoded, int(line))


_PRIVATE_HBM = (memory.hbm, memory.private_hbm)
_NO_KEYWORDS: Dict[str, Any] = {}   # passed as **_NO_KEYWORDS (never modified)
_NO_ARGUMENTS: List[Any] = []      # never modified

# A compiled value: (False, the value) for constants, (True, function of the Replay) for values that depend on
# the run (references to tensors and tiles, views of them, fresh lists and constant arrays).
Compiled = Tuple[bool, Any]


_STEP_BATCH = 1024


class Replay:
    """Executes a program through the simulator API on real inputs (no kernel code involved). The program is
    validated and compiled once (constants decoded, geometry checked); each run only resolves references."""

    def __init__(self, program: Program, banned_formats: FrozenSet[str] = frozenset()) -> None:
        """`banned_formats`: dtype names the program may not use (the profile's low-precision ban), a COMPILE_ERROR
        at the kernel line of the call that names one."""
        self.program = program
        self.banned_formats = banned_formats
        self.api = _api()
        self.functions = _functions()
        self.values: List[Any] = []
        self.known: set = set()
        self.run_state: Optional[runtime.Run] = None
        self.run_token = object()    # a fresh object per run
        # indices of the last run's outputs that live in per-program HBM (nl.hbm, nl.private_hbm) while the
        # launch ran several programs: each program wrote its own copy, one of which was returned
        self.private_outputs: List[int] = []
        # bytes of the last numerics run's outputs that its instructions wrote (_written_output_bytes); None after a
        # timing-only run
        self.output_bytes: Optional[int] = None
        self.view_table: List[Callable[['Replay'], View]] = []
        # id(shape value) -> (the geometry values of a view definition, then shape, strides, index map and the
        # lowest and highest element reached from offset 0) for definitions that share their decoded geometry
        # (parse_program): validated once
        self.geometries: Dict[int, Tuple[Any, ...]] = {}
        self.references: Dict[int, Callable[['Replay'], Any]] = {}    # compiled {"ref": n} by n
        # keywords text of a CallLine -> (compiled keywords, static keywords or None), shared by the steps
        self.compiled_keywords: Dict[str, Tuple[Dict[str, Compiled], Optional[Dict[str, Any]]]] = {}
        self.steps: List[Tuple[Any, ...]] = []
        # the entries not compiled yet: the first run compiles them as it reaches them (step A may still be
        # writing the program), later runs execute the compiled steps
        self.unread: Optional[Iterator[Dict[str, Any]]] = iter(program.entries)
        self.reading = False

    def _steps(self) -> Iterable[Tuple[Any, ...]]:
        if self.unread is None:
            return self.steps
        if self.reading:
            raise ProgramError('the first run of the program did not complete')
        self.reading = True
        return self._compile_steps(self.unread)

    def _compile_steps(self, entries: Iterator[Dict[str, Any]]) -> Iterator[Tuple[Any, ...]]:
        """Compile the steps as their entries are read and yield them in batches (executing each step as soon as
        it is compiled costs a third more CPU time than compiling a batch, then executing it); the program must
        end with its only return."""
        steps = self.steps
        batch: List[Tuple[Any, ...]] = []
        for number, entry in enumerate(entries):
            step = self._compile_entry(number, entry)
            if step is None:
                continue
            if steps and steps[-1][0] == 'return':
                raise ProgramError('entries after the return')
            steps.append(step)
            batch.append(step)
            if len(batch) == _STEP_BATCH:
                yield from batch
                batch = []
        yield from batch
        if not steps or steps[-1][0] != 'return':
            raise ProgramError('the program ends without a return entry (truncated?)')
        self.unread = None

    def run(self, arrays: Sequence[np.ndarray], timing_only: bool, free_plan: Optional[Dict[int, List[int]]] = None,
            check_coverage: bool = True, formats: Optional[Sequence[Optional[LowPrecisionType]]] = None
            ) -> Tuple[Any, TraceRecorder, List[Tuple[int, int, np.ndarray]]]:
        """(outputs or None in timing-only mode, trace, [(output index, elements never written)]). `formats`: per
        input, the NKI format numpy lacks that the caller (the problem) gives it, None for the array's own dtype
        (then that array is the float32 storage, values on the format's grid). The program's declarations are
        only checked against them, never used to build an input."""
        program = self.program
        formats = list(formats) if formats is not None else [None] * len(arrays)
        if len(formats) != len(arrays):
            raise ValueError('one input format (or None) per input array')
        declared = [(tuple(a.shape), a.dtype.name if f is None else f.name) for a, f in zip(arrays, formats)]
        if declared != program.inputs:
            raise ProgramError(f'the program declares inputs {_describe(program.inputs)}; the problem has '
                               f'{_describe(declared)}')
        recorder = TraceRecorder(program.kernel_name, timing_only, free_plan)
        run = runtime.Run('', recorder, numerics=not timing_only)
        run.grid = program.grid
        run.integer_gpsimd = program.beta2      # a Beta 2 program (ProgramRecorder.start)
        run.fixed_line = 0
        self.values = []
        self.known = set()
        self.run_token = object()
        self.run_state = run
        # a copy of each input: a kernel may update an argument in place, and the reference's outputs may share
        # memory with its inputs
        arguments = [shape_only_input(array.shape, array.dtype if f is None else f) if timing_only
                     else hbm_tensor(np.array(array, copy=True), memory.shared_hbm, name='input', dtype=f)
                     for array, f in zip(arrays, formats)]
        for argument in arguments:
            self.register(argument)
        if not timing_only and check_coverage:
            # the arguments too: an argument updated in place and returned is an output whose written part counts
            run.coverage = {argument.hbm_alloc.serial: np.zeros(argument.free, bool) for argument in arguments}
            run.races = WriteRaces()
        values, known, coverage = self.values, self.known, run.coverage
        previous = runtime.RUN
        runtime.RUN = run
        returned: Any = None
        programs = 0
        try:
            for step in self._steps():
                kind = step[0]
                if kind == 'call':
                    _, function, line, args, kwargs, static_args, static_kwargs = step
                    run.fixed_line = line
                    result = function(*(static_args if static_args is not None else
                                        [v(self) if dynamic else v for dynamic, v in args]),
                                      **(static_kwargs if static_kwargs is not None else
                                         {k: v(self) if dynamic else v for k, (dynamic, v) in kwargs.items()}))
                    if type(result) is Tensor and coverage is None:    # an instruction's tile (register(), inline)
                        if id(result) not in known:
                            known.add(id(result))
                            values.append(result)
                    elif result is not None:
                        self.register(result)
                elif kind == 'scope':
                    run.reuse_scope = step[1]
                elif kind == 'affine':
                    run.affine_context = step[1]
                elif kind == 'spmd':
                    programs += 1
                    run.core_split = step[3]
                    run.enter_program(step[1])
                    run.shared_ordinal = step[2]
                    if run.races is not None and step[1] and not any(step[1]):    # a grid's first program
                        run.races.start_launch()
                elif kind == 'spmd_end':
                    run.core_split = step[2]
                    run.enter_program(step[1])
                    if run.races is not None:
                        run.races.end_launch()
                else:
                    runtime.flush()
                    dynamic, value = step[1]
                    returned = value(self) if dynamic else value
            runtime.flush()
            check_fresh(returned, run, arguments)
        finally:
            runtime.RUN = previous
        outputs = as_outputs(returned, timing_only)
        unwritten = _unwritten(returned, run.coverage, arguments) if run.coverage is not None else []
        self.output_bytes = _written_output_bytes(returned, run.coverage) if run.coverage is not None else None
        self.private_outputs = [index for index, value in enumerate(
            returned if isinstance(returned, (tuple, list)) else (returned,))
            if programs > 1 and isinstance(value, Tensor) and value.buffer in _PRIVATE_HBM]
        return outputs, recorder, unwritten

    def register(self, value: Any) -> None:
        if isinstance(value, (Tensor, View)):
            if id(value) not in self.known:
                self.known.add(id(value))
                self.values.append(value)
                coverage = self.run_state.coverage if self.run_state is not None else None
                if coverage is not None and isinstance(value, Tensor) and value.buffer in _OUTPUT_BUFFERS \
                        and value.hbm_alloc.serial not in coverage:
                    coverage[value.hbm_alloc.serial] = np.zeros(value.free, bool)
        elif isinstance(value, (tuple, list)):
            for v in value:
                self.register(v)

    def reference(self, index: int) -> Any:
        if index >= len(self.values):
            raise ProgramError(f'reference to unknown value {index}')
        return self.values[index]

    # ----- compiling -----
    def _compile_entry(self, number: int, entry: Any) -> Optional[Tuple[Any, ...]]:
        try:
            if type(entry) is CallLine:
                return self._compile_call_line(entry)
            if type(entry) is AffineLine:
                return ('affine', entry.context)
            if 'viewdef' in entry:
                self._define_view(entry)
                return None
            if 'scope' in entry:
                return ('scope', _scope(entry['scope']))
            if 'affine' in entry:
                return ('affine', _affine_context(entry['affine']))
            if 'spmd' in entry:
                return ('spmd', _int_tuple(entry['spmd'], 'spmd ids'), _int(entry.get('ordinal', 0), 'ordinal'),
                        _core_split(entry.get('nc')))
            if 'spmd_end' in entry:
                return ('spmd_end', _int_tuple(entry['spmd_end'], 'spmd_end ids'), _core_split(entry.get('nc')))
            if 'return' in entry:
                return ('return', self.compile(entry['return']))
            name = entry.get('c')
            function = self.api.get(name) if isinstance(name, str) else None
            if function is None:
                raise ProgramError(f'unknown call {name!r}')
            args, kwargs = entry.get('a', _NO_ARGUMENTS), entry.get('k', _NO_KEYWORDS)
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise ProgramError('bad arguments')
            # arguments without run-dependent values are built once (static_args, static_kwargs)
            compile = self.compile
            compiled_args = []
            constant = True
            for a in args:
                compiled = compile(a)
                compiled_args.append(compiled)
                if compiled[0]:
                    constant = False
            static_args = [v for _, v in compiled_args] if constant else None
            compiled_kwargs = {}
            constant = True
            for k, v in kwargs.items():
                compiled = compiled_kwargs[str(k)] = compile(v)
                if compiled[0]:
                    constant = False
            static_kwargs = _NO_KEYWORDS if not compiled_kwargs else \
                {k: v for k, (_, v) in compiled_kwargs.items()} if constant else None
            return ('call', function, _int(entry.get('l', 0), 'line'), compiled_args, compiled_kwargs, static_args,
                    static_kwargs)
        except ProgramError as error:
            raise ProgramError(f'program entry {number}: {error}') from None
        except BannedFormat as banned:
            line = entry.line if type(entry) is CallLine else entry.get('l', 0)
            raise CompileError(f'low-precision type {banned.name!r} is not allowed: kernels must compute in float32 '
                               '(fp16, bf16, tf32 and fp8 are banned)', line if type(line) is int else 0) from None

    def _compile_call_line(self, call: CallLine) -> Tuple[Any, ...]:
        """_compile_entry of a CallLine: the same step. Its keywords are compiled once per distinct keywords text
        (compiling a value depends on the value alone, and a view number defined once stays defined)."""
        function = self.api.get(call.name)
        if function is None:
            raise ProgramError(f'unknown call {call.name!r}')
        view_table = self.view_table
        references = self.references
        compiled_args = []
        for index in call.arguments:
            if index < 0:
                if ~index >= len(view_table):
                    raise ProgramError(f'reference to undefined view {~index}')
                compiled_args.append((True, view_table[~index]))
            else:
                reference = references.get(index)
                if reference is None:
                    reference = references[index] = functools.partial(_reference, index)
                compiled_args.append((True, reference))
        keywords = self.compiled_keywords.get(call.keywords_text)
        if keywords is None:
            compiled_kwargs = {}
            constant = True
            for k, v in call.keywords.items():
                compiled = compiled_kwargs[str(k)] = self.compile(v)
                if compiled[0]:
                    constant = False
            static_kwargs = _NO_KEYWORDS if not compiled_kwargs else \
                {k: v for k, (_, v) in compiled_kwargs.items()} if constant else None
            keywords = self.compiled_keywords[call.keywords_text] = (compiled_kwargs, static_kwargs)
        return ('call', function, call.line, compiled_args, keywords[0], None if compiled_args else [], keywords[1])

    def compile(self, value: Any) -> Compiled:
        if value is None or isinstance(value, (bool, int, float, str)):
            return False, value
        if not isinstance(value, dict) or len(value) == 0:
            raise ProgramError(f'bad value {value!r}')
        if 'ref' in value:
            index = _int(value['ref'], 'ref')
            if index < 0:
                raise ProgramError(f'reference to unknown value {index}')
            reference = self.references.get(index)
            if reference is None:
                reference = self.references[index] = functools.partial(_reference, index)
            return True, reference
        if 'view' in value:
            return True, self._view(value)
        if 'vref' in value:
            index = _int(value['vref'], 'vref')
            if not 0 <= index < len(self.view_table):
                raise ProgramError(f'reference to undefined view {index}')
            return True, self.view_table[index]
        if 'indirect' in value:
            return True, self._indirect(value)
        if 'hbm_reshape' in value:
            _, base = self.compile({'ref': value['hbm_reshape']})
            shape = _int_tuple(value.get('shape'), 'shape')
            return True, lambda replay: _hbm_reshape(base(replay), shape)
        if 'list' in value or 'tuple' in value or 'slice' in value:
            items = value.get('list', value.get('tuple', value.get('slice')))
            if not isinstance(items, list) or 'slice' in value and len(items) != 3:
                raise ProgramError('bad sequence')
            parts = [self.compile(v) for v in items]
            build = _SEQUENCES['list' if 'list' in value else 'tuple' if 'tuple' in value else 'slice']
            if 'list' not in value and not any(dynamic for dynamic, _ in parts):
                return False, build([v for _, v in parts])
            return True, lambda replay: build([v(replay) if dynamic else v for dynamic, v in parts])
        if 'array' in value:
            array = _constant_array(value)
            return True, lambda replay: array.copy()
        return False, self._constant(value)

    def _constant(self, value: Dict[str, Any]) -> Any:
        if 'loop' in value:
            index = _int(value['loop'], 'loop index')
            return FirstIndex(index) if value.get('first') is True else LoopIndex(index)
        if 'np' in value:
            v = value.get('v')
            if not isinstance(v, (bool, int, float)):
                raise ProgramError(f'bad numpy scalar {v!r}')
            return _numeric_dtype(value['np']).type(v)
        if 'affine' in value:
            return _affine(value['affine'])
        if 'pred' in value:
            atoms = value['pred']
            if not isinstance(atoms, list) or not all(isinstance(a, list) and len(a) == 2 for a in atoms):
                raise ProgramError('bad mask predicate')
            decoded = []
            for aff, kind in atoms:
                if not isinstance(aff, dict) or 'affine' not in aff or kind not in ('ge', 'ne'):
                    raise ProgramError('bad mask predicate atom')
                decoded.append((_affine(aff['affine']), kind))
            return Predicate(tuple(decoded))
        if 'buffer' in value:
            return _lookup(_BUFFERS, value['buffer'], 'buffer')
        if 'engine' in value:
            return _lookup(_ENGINES, value['engine'], 'engine')
        if 'dtype' in value:
            name = value['dtype']
            if name in self.banned_formats:
                raise BannedFormat(name)
            if name in _LOW_PRECISION:
                return _LOW_PRECISION[name]
            return _numeric_dtype(name).type
        if 'par_dim' in value:
            return par_dim(_int(value['par_dim'], 'par_dim'))
        if 'ellipsis' in value:
            return Ellipsis
        if 'fn' in value:
            return _lookup(self.functions, value['fn'], 'function')
        raise ProgramError(f'unknown value kind {sorted(value)}')

    def _define_view(self, entry: Dict[str, Any]) -> None:
        """A `viewdef` entry: view number n (numbered in order) for later `vref` values."""
        if _int(entry['viewdef'], 'view number') != len(self.view_table):
            raise ProgramError(f'view definition {entry["viewdef"]} out of order')
        of = entry.get('of')
        if not isinstance(of, dict) or 'view' not in of:
            raise ProgramError('bad view definition')
        self.view_table.append(self._view(of))

    def _view(self, value: Dict[str, Any]) -> Callable[['Replay'], View]:
        dynamic, tensor_of = self.compile(value['view'])
        if not dynamic:
            raise ProgramError('a view of something that is not a tensor')
        block = _int_tuple(value.get('block'), 'block')
        offset = _int(value.get('offset'), 'offset')
        fields = (value.get('shape'), value.get('strides'), value.get('index_map'), value.get('in_bounds'),
                  value.get('tensor_indexed'))
        known = self.geometries.get(id(fields[0]))
        if known is None or known[0] is not fields[0] or known[1] is not fields[1] or known[2] is not fields[2] \
                or known[3] is not fields[3] or known[4] is not fields[4]:
            known = fields + _view_geometry(*fields)
            self.geometries[id(fields[0])] = known    # keeps the values alive: their ids stay their own
        shape, strides, index_map, low, high = known[5:]
        in_bounds, indexed = fields[3], fields[4]
        lo, hi = (0, -1) if high < low else (offset + low, offset + high)
        checked = in_bounds or index_map is None
        # A view of a run value (`ref`: alive for the whole run, so its id is its own) is checked against it once
        # per run, and is one View at every use in that run (views do not change; the trace measures each once,
        # runtime._operand): (run, id of the tensor, the View) it was last checked against.
        source = value['view']
        index = source['ref'] if len(source) == 1 and 'ref' in source else None    # (checked by compile)
        memo: List[Any] = [None, None, None] if index is not None else []

        def view(replay: 'Replay') -> View:
            if index is not None:       # _reference, inline
                values = replay.values
                if index >= len(values):
                    raise ProgramError(f'reference to unknown value {index}')
                tensor = values[index]
            else:
                tensor = tensor_of(replay)
            if memo and memo[0] is replay.run_token and memo[1] == id(tensor):
                if tensor.pending is not None:
                    runtime.flush()
                return memo[2]
            if not isinstance(tensor, Tensor):
                raise ProgramError('a view of something that is not a tensor')
            if tensor.pending is not None:
                runtime.flush()
            if len(block) != tensor.nblock:
                raise ProgramError(f'view block {block} out of range for a tensor of shape {tensor.shape}')
            for b, n in zip(block, tensor.shape):
                if not 0 <= b < n:
                    raise ProgramError(f'view block {block} out of range for a tensor of shape {tensor.shape}')
            if checked and (lo < 0 or hi >= tensor.parts * tensor.free):
                raise ProgramError(f'view reaches elements [{lo}, {hi}] outside its allocation of '
                                   f'{tensor.parts * tensor.free} elements')
            made = View(tensor, block, offset, shape, strides, index_map, in_bounds, indexed)
            if memo:
                memo[0], memo[1], memo[2] = replay.run_token, id(tensor), made
            return made
        return view

    def _indirect(self, value: Dict[str, Any]) -> Callable[['Replay'], IndirectView]:
        base_value = value['indirect']
        if not isinstance(base_value, dict) or not ('view' in base_value or 'vref' in base_value):
            raise ProgramError('an indirect access needs a view')
        _, base = self.compile(base_value)
        dynamic, index_of = self.compile(value.get('index'))
        if not dynamic:
            raise ProgramError('the index of an indirect access is not a tile')
        row_stride = _int(value.get('row_stride'), 'row_stride')
        rows = _int(value.get('rows'), 'rows')
        if rows < 1:
            raise ProgramError('an indirect access needs at least one row')
        scalar = value.get('scalar', False)
        if not isinstance(scalar, bool):
            raise ProgramError('an indirect access has a bad scalar flag')
        runs = value.get('runs')
        if runs is not None and (type(runs) is not int or scalar):
            raise ProgramError('an indirect access has a bad runs axis')
        pattern = value.get('pattern', False)
        if pattern is not False and (pattern is not True or not scalar):
            raise ProgramError('an indirect access has a bad pattern flag')

        def indirect(replay: 'Replay') -> IndirectView:
            index = index_of(replay)
            if isinstance(index, Tensor):
                index = index.view()
            if not isinstance(index, View) or not index.tensor.buffer.on_chip:
                raise ProgramError('the index of an indirect access is not an on-chip tile')
            view = base(replay)
            if not isinstance(view, View):
                raise ProgramError('an indirect access needs a view')
            if view.tensor.buffer.on_chip and runs is not None:     # a tile of offsets, one run per offset
                count = view.shape[runs] if 0 <= runs < len(view.shape) else 0
                if count < 2 or index.shape not in ((count, 1), (1, count)) or index.tensor.buffer is not memory.sbuf \
                        or index.tensor.kind.storage.kind not in 'iu' or not dynamic_reach_ok(view, row_stride, rows):
                    raise ProgramError('bad dynamic offsets access geometry')
                return DynamicRunsView(view, index, row_stride, rows, runs)
            if runs is not None or pattern and not view.tensor.buffer.on_chip:
                raise ProgramError('a runs axis or pattern flag on an HBM access')
            if view.tensor.buffer.on_chip:      # a dynamic offset within each partition (the dynamic copies)
                if not scalar or int(np.prod(index.shape)) != 1 or index.tensor.buffer is not memory.sbuf \
                        or index.tensor.kind.storage.kind not in 'iu' or not dynamic_reach_ok(view, row_stride, rows):
                    raise ProgramError('bad dynamic offset access geometry')
                dynamic = DynamicView(view, index, row_stride, rows)
                dynamic.pattern = pattern
                return dynamic
            index = index_tile(index, columns=True)     # step A's rules on the index tile
            lo, hi = extent(view.offset, view.shape, view.strides)
            columns = int(np.prod(index.shape[1:]))     # several: the indirect transpose's index (read column-wise)
            rows_ok = index.shape[0] == 1 if scalar else view.strides[0] == 0 and (
                view.shape[0] <= index.shape[0] if columns == 1 else
                len(index.shape) == 2 and index.shape[0] == INDEX_PARTITIONS
                and view.shape[0] <= index.shape[0] * columns)
            if row_stride < 0 or hi + (rows - 1) * row_stride >= view.tensor.free \
                    or lo < 0 or not rows_ok:
                raise ProgramError('bad indirect access geometry')
            if (columns > 1 or view.shape[0] < index.shape[0]) and not scalar:
                return GatherTransposeView(view, index, row_stride, rows)
            return IndirectView(view, index, row_stride, rows, scalar)
        return indirect


def _view_geometry(shape: Any, strides: Any, index_map: Any, in_bounds: Any, indexed: Any) -> Tuple[Any, ...]:
    """A view definition's validated geometry: shape, strides, index map and the lowest and highest element it
    reaches from offset 0 (0, -1 when empty)."""
    shape = _int_tuple(shape, 'shape')
    strides = _int_tuple(strides, 'strides')
    if len(shape) != len(strides) or len(shape) < 1 or min(shape) < 0 \
            or not isinstance(in_bounds, bool) or not isinstance(indexed, bool):
        raise ProgramError('bad view geometry')
    return (shape, strides, _index_map(index_map)) + extent(0, shape, strides)


def _reference(index: int, replay: Replay) -> Any:
    """Value `index` of the run (Replay.reference)."""
    values = replay.values
    if index >= len(values):
        raise ProgramError(f'reference to unknown value {index}')
    return values[index]


def _scope(value: Any) -> Tuple[Any, ...]:
    """A load-reuse scope: enclosing (loop, index) pairs, then the innermost loop's id."""
    if not isinstance(value, list) or not all(type(v) is int or isinstance(v, list) and len(v) == 2 and
                                              all(type(x) is int for x in v) for v in value):
        raise ProgramError(f'bad reuse scope {value!r}')
    return tuple(tuple(v) if isinstance(v, list) else v for v in value)


def _affine_context(value: Any) -> Tuple[Tuple[int, int], ...]:
    """The affine_range iterations the next calls run in: (loop, index) pairs, outermost first."""
    if not isinstance(value, list) or not all(isinstance(v, list) and len(v) == 2 and all(type(x) is int for x in v)
                                              for v in value):
        raise ProgramError(f'bad affine_range context {value!r}')
    return tuple((v[0], v[1]) for v in value)


def _slice(parts: List[Any]) -> slice:
    return slice(*parts)


_SEQUENCES: Dict[str, Callable[[List[Any]], Any]] = {'list': list, 'tuple': tuple, 'slice': _slice}


def _hbm_reshape(base: Any, shape: Tuple[int, ...]) -> Tensor:
    if not isinstance(base, Tensor) or base.buffer.on_chip:
        raise ProgramError('hbm_reshape of a value that is not an HBM tensor')
    return base.reshape(shape)


def _index_map(value: Any) -> Any:
    """View.index_map: None, or per indexed dimension (size, constant, ((axis, coefficient), ...))."""
    if value is None:
        return None
    entries = []
    try:
        for size, c, terms in value:
            if type(size) is not int or type(c) is not int:
                raise ProgramError('bad index map')
            pairs = []
            for axis, coef in terms:
                if type(axis) is not int or type(coef) is not int:
                    raise ProgramError('bad index map')
                pairs.append((axis, coef))
            entries.append((size, c, tuple(pairs)))
    except (TypeError, ValueError):
        raise ProgramError('bad index map') from None
    return tuple(entries)


def _constant_array(value: Dict[str, Any]) -> np.ndarray:
    shape = _int_tuple(value.get('shape'), 'array shape')
    data = value.get('data')
    count = int(np.prod(shape, dtype=np.int64))
    if not isinstance(data, list) or len(data) != count or count > MAX_CONSTANT_ELEMENTS:
        raise ProgramError('bad constant array')
    try:
        return np.array(data, dtype=_numeric_dtype(value['array'])).reshape(shape)
    except (TypeError, ValueError) as failure:
        raise ProgramError(f'bad constant array: {failure}') from None


def _describe(inputs: Sequence[Tuple[Tuple[int, ...], str]]) -> str:
    return ', '.join(f'{list(shape)} {dtype}' for shape, dtype in inputs) or 'none'


def _lookup(table: Dict[str, Any], name: Any, what: str) -> Any:
    if not isinstance(name, str) or name not in table:
        raise ProgramError(f'unknown {what} {name!r}')
    return table[name]


def _affine(spec: Any) -> Affine:
    if not isinstance(spec, list) or len(spec) not in (3, 4) or not isinstance(spec[1], list):
        raise ProgramError('bad index expression')
    terms = tuple(_int_tuple(t, 'index expression term') for t in spec[1])
    if any(len(t) != 3 for t in terms):
        raise ProgramError('bad index expression term')
    grid = _int_tuple(spec[3], 'mgrid shape') if len(spec) == 4 else None
    return Affine(_int(spec[0], 'index constant'), terms, _int(spec[2], 'index rank'), grid)


def _written_output_bytes(returned: Any, coverage: Dict[int, np.ndarray]) -> int:
    """Bytes of the returned HBM tensors that instructions wrote, at each tensor's declared element size (a bf16 or
    fp8 output lives in float32 storage here, and an argument updated in place keeps the problem's data where the
    kernel did not write): what a timed run must at least have written to HBM to produce the outputs."""
    total = 0
    counted = set()
    for value in returned if isinstance(returned, (tuple, list)) else (returned,):
        if isinstance(value, Tensor) and value.hbm_alloc is not None and value.hbm_alloc.serial not in counted:
            counted.add(value.hbm_alloc.serial)
            written = coverage.get(value.hbm_alloc.serial)
            elements = value.free if written is None else int(np.count_nonzero(written))
            total += elements * value.kind.itemsize
    return total


def _unwritten(returned: Any, coverage: Dict[int, np.ndarray],
               arguments: Sequence[Tensor]) -> List[Tuple[int, int, np.ndarray]]:
    """(output index, count, mask of the elements no instruction wrote, in the output's shape) per output. An
    argument updated in place keeps the problem's own data where the kernel did not write: never counted."""
    outputs = returned if isinstance(returned, (tuple, list)) else (returned,)
    missing = []
    for index, value in enumerate(outputs):
        if isinstance(value, Tensor) and value.hbm_alloc is not None \
                and not any(value.hbm_alloc is argument.hbm_alloc for argument in arguments):
            written = coverage.get(value.hbm_alloc.serial)
            count = value.free if written is None else int(written.size - np.count_nonzero(written))
            if count:
                if written is None or written.size != value.free:
                    mask = np.ones(value.shape, bool)
                else:
                    mask = ~written.reshape(value.shape)
                missing.append((index, count, mask))
    return missing
