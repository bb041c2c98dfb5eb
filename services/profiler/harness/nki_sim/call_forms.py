"""How an nl/nisa call may be spelled: declared keywords only, and NKI Beta 2 destination passing.

`checked` wraps every public nl/nisa function:
- A keyword the function does not declare is a CompileError naming it; it is never silently dropped (`name=`,
  the instruction's label, and `dge_mode=`, how DMA descriptors are generated, are accepted and have no effect on
  results).
- `dst=` (Beta 2): the call runs and its result is written to dst, exactly as `dst[...] = result` would write it.
  Functions that declare their own destination (nisa.dma_copy, nl.store) keep it.
  A matmul into a PSUM dst accumulates (`+=`) unless `accumulate=False` (Beta 2's default, accumulate=None).
- Beta 2 positional form: in a kernel written against the `nki` namespace (the run's `beta2` flag), a nisa call
  without `dst=` takes its first positional argument as dst (`nisa.nc_matmul(res_psum, a, b)`) when it passes
  more positional arguments than the required parameters it leaves unnamed; with no more than that it returns its
  result as in Beta 1 (`v_t = nisa.nc_transpose(v)`, which NKI 0.3 kernels write). For the functions whose Beta 2
  parameters follow dst in another order than the simulator's (`beta2_positional`, nki_sim/isa.py), the
  positional arguments of that form are bound by their Beta 2 names (`nisa.tensor_copy(dst, src, engine)`).
- Beta 1 positional arguments: where the simulator's parameter order differs from the Beta 1 API's, a call passing
  more positional arguments than the Beta 1 signatures give positions to is a CompileError
  (`BETA1_POSITIONAL`), instead of binding the extra ones to a parameter of another meaning
  (`nisa.nc_transpose(dst, src)` read src as engine=).
"""
import functools
import inspect
from typing import Any, Callable, Dict, Tuple

from . import memory, runtime
from .compute import accumulate, assign
from .errors import CompileError
from .indirect import DynamicView
from .runtime import operand
from .tensors import Tensor
from .views import View

ACCEPTED_WITHOUT_EFFECT = frozenset({'name', 'dge_mode'})
# (qualified name, dst) of the kernel's nl/nisa call being run: an instruction whose semantics depend on its
# destination's dtype reads it (nisa.tensor_tensor's native integer arithmetic); None outside a dst= call
CALL_DESTINATION: list = [None]
_NESTED = [0]       # > 0 while an nl/nisa function runs: the calls it makes are not the kernel's
# The parameters a Beta 1 call may pass by position, for the functions whose simulator signature orders its
# optional parameters differently from the Beta 1 API. The bound is the most any Beta 1 signature allows: the
# early stub (general/nki/api/nki/isa/__init__.py of aws-neuron-sdk, no `*`) orders `mask`, `dtype` and `engine`
# after these; the later stub and the v2.2x API pages make everything after them keyword-only, e.g.
# `nc_transpose(data, *, mask=None, dtype=None, engine=engine.unknown)`, `tensor_copy(src, *, mask=None, ...)`.
BETA1_POSITIONAL = {
    'nisa.nc_transpose': ('data',),
    'nisa.bn_stats': ('data',),
    'nisa.bn_aggr': ('data',),
    'nisa.tensor_copy': ('src',),
    'nisa.dropout': ('data', 'prob'),
    'nisa.tensor_partition_reduce': ('op', 'data'),
    'nisa.tensor_reduce': ('op', 'data', 'axis'),
    'nisa.affine_select': ('pred', 'on_true_tile', 'on_false_value'),
    'nisa.reciprocal': ('data', 'dtype', 'mask'),
    'nisa.iota': ('expr', 'dtype', 'mask'),
    'nisa.activation': ('op', 'data', 'bias', 'scale'),
    'nisa.nc_matmul': ('stationary', 'moving', 'is_stationary_onezero', 'is_moving_onezero'),
    'nisa.memset': ('shape', 'value', 'dtype', 'mask'),
    'nisa.local_gather': ('src_buffer', 'index', 'num_elem_per_idx', 'num_valid_indices'),
    'nisa.tensor_tensor': ('data1', 'data2', 'op', 'dtype', 'mask'),
    # every Beta 1 stub and page: `dma_transpose(src, *, axes=None, mask=None, dtype=None, **kwargs)`
    'nisa.dma_transpose': ('src',),
}


def normalized(function: Callable[..., Any], args: Tuple[Any, ...],
               kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """The call in keyword-dst form: a Beta 2 positional destination moved to `dst=`; for a function whose
    Beta 2 positional order differs from its Beta 1 one (`beta2_order`), every positional argument named."""
    order = getattr(function, 'beta2_order', None)
    if order and args and runtime.RUN is not None and runtime.RUN.beta2:
        kwargs = dict(kwargs)
        for name, value in zip(order, args):
            if name in kwargs:      # (Python's TypeError; the positional value silently replaced the keyword)
                raise CompileError(f'{getattr(function, "qualified", "this function")}() got multiple values for '
                                   f'argument {name!r}')
            kwargs[name] = value
        return args[len(order):], kwargs
    positional = getattr(function, 'beta2_positional', None)
    choose = getattr(function, 'beta2_positional_for', None)
    if choose is not None and args:     # an order told by the arguments (nisa.affine_select's two Beta 2 orders)
        positional = choose(args)
    if positional is not None and getattr(function, 'own_destination', False) and args \
            and not isinstance(args[0], (Tensor, View)):
        positional = None       # memset / iota called in their Beta 1 form, returning a new tile
    if (getattr(function, 'dst_first', False) or positional is not None) and args and 'dst' not in kwargs \
            and runtime.RUN is not None and runtime.RUN.beta2 and len(args) > _unnamed_required(function, kwargs):
        kwargs = dict(kwargs)
        if positional is None:
            kwargs['dst'] = args[0]
            return args[1:], kwargs
        qualified = getattr(function, 'qualified', 'this function')
        if len(args) > len(positional):
            raise CompileError(f'{qualified}() takes {len(positional)} positional arguments in NKI Beta 2 '
                               f'({", ".join(positional)}) but {len(args)} were given')
        for name, value in zip(positional, args):
            if name in kwargs:
                raise CompileError(f'{qualified}() got multiple values for argument {name!r}')
            kwargs[name] = value
        return (), kwargs
    return args, kwargs


def _unnamed_required(function: Callable[..., Any], kwargs: Dict[str, Any]) -> int:
    """How many required parameters the call leaves to positional arguments: a call with no more positional
    arguments than that returns its result (`v_t = nisa.nc_transpose(v)` in an `import nki` kernel), one with more
    passes its destination first."""
    return sum(1 for name in getattr(function, 'required', ()) if name not in kwargs)


def checked(qualified: str, function: Callable[..., Any], dst_first: bool = False) -> Callable[..., Any]:
    """`function` with keyword checking and dst= support; `qualified` (nl.exp) names it in messages."""
    parameters = inspect.signature(function).parameters
    declared = frozenset(name for name, p in parameters.items()
                         if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))
    own_destination = 'dst' in declared
    accumulating = 'accumulate' not in declared
    beta2_order = getattr(function, 'beta2_order', None)
    beta2_positional = getattr(function, 'beta2_positional', None) or getattr(function, 'beta2_positional_for', None)
    accepted_keys: set = set()     # keyword name tuples found acceptable (the check depends on the names only)
    beta1_positional = BETA1_POSITIONAL.get(qualified)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _NESTED[0]:              # nl.matmul calling nisa.nc_matmul: the simulator's own spelling, as written
            return function(*args, **kwargs)
        _NESTED[0] += 1
        try:
            return checked_call(args, kwargs)
        finally:
            _NESTED[0] -= 1

    def checked_call(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        if beta1_positional is not None and len(args) > len(beta1_positional) and runtime.RUN is not None \
                and not runtime.RUN.beta2:
            named = ', '.join(beta1_positional)
            raise CompileError(f'{qualified}() takes {len(beta1_positional)} positional argument'
                               f'{"s" if len(beta1_positional) > 1 else ""} in NKI Beta 1 ({named}) but '
                               f'{len(args)} were given; pass the others by keyword (a Beta 2 destination-first '
                               f'call needs `import nki`)', _line())
        if not kwargs and not ((dst_first or beta2_order or beta2_positional) and runtime.RUN is not None
                               and runtime.RUN.beta2):
            return function(*args)
        if (not own_destination or beta2_order or beta2_positional) and runtime.RUN is not None \
                and runtime.RUN.beta2:
            args, kwargs = normalized(call, args, kwargs)      # (which changes nothing in a Beta 1 run)
        keys = tuple(kwargs)
        if keys not in accepted_keys:
            for key in keys:
                if key not in declared and key not in ACCEPTED_WITHOUT_EFFECT and \
                        not (key == 'dst' and not own_destination) and \
                        not (key == 'accumulate' and accumulating and 'dst' in kwargs):
                    raise CompileError(f'{qualified}() got an unexpected keyword argument {key!r} (the simulator '
                                       f'refuses arguments it would otherwise ignore)', _line())
            accepted_keys.add(keys)
        dst = None if own_destination else kwargs.pop('dst', None)
        add_into = kwargs.pop('accumulate', None) if dst is not None and accumulating else False
        if not ACCEPTED_WITHOUT_EFFECT.isdisjoint(keys):      # (a function that declares one checks it)
            kwargs = {k: v for k, v in kwargs.items() if k not in ACCEPTED_WITHOUT_EFFECT or k in declared}
        CALL_DESTINATION[0] = (qualified, dst) if dst is not None else None
        try:
            result = function(*args, **kwargs)
        finally:
            CALL_DESTINATION[0] = None
        if dst is None:
            return result
        if result is None:
            raise CompileError(f'{qualified}() writes no result, so dst= has nothing to receive', _line())
        written_at_offset = getattr(function, 'dynamic_destination', None)
        if written_at_offset is not None and isinstance(dst, DynamicView):
            written_at_offset(dst, result)      # nisa.tensor_copy into an .ap(scalar_offset=...) view
            return None
        target = operand(dst)
        if qualified == 'nisa.nc_transpose' and runtime.RUN is not None and runtime.RUN.beta2:
            _check_transpose_format(result, target)
            _check_transpose_destination(result, target)
        if add_into is None:        # matmuls into PSUM accumulate unless told otherwise (Beta 2 accumulate=None)
            add_into = qualified == 'nisa.nc_matmul' and target.tensor.buffer is memory.psum
        if add_into:
            accumulate(target, result)
        else:
            assign(target, result)
        return None

    setattr(call, 'dst_first', dst_first and not own_destination)
    setattr(call, 'beta2_positional', getattr(function, 'beta2_positional', None))
    setattr(call, 'beta2_positional_for', getattr(function, 'beta2_positional_for', None))
    setattr(call, 'own_destination', own_destination)
    setattr(call, 'qualified', qualified)
    setattr(call, 'required', tuple(name for name, p in parameters.items()
                                    if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is p.empty))
    setattr(call, 'beta2_order', beta2_order)
    return call


def _check_transpose_format(result: Any, target: Any) -> None:
    """A Beta 2 `nisa.nc_transpose(dst, data)` keeps data's format: "The output dst tile must have the same data type
    as that of data" (the Beta 2 nki.isa.nc_transpose page; a trn2 model port records the same, "CoreV3+ requires
    nc_transpose input/output dtypes to match"). Written into a dst of another format, the transpose would be
    converted on the way, which the page rules out."""
    source = getattr(result, 'kind', None)
    destination = target.tensor.kind
    if source is not None and source.public != destination.public:
        raise CompileError(f'nisa.nc_transpose: dst is {destination.public} but data is {source.public}; "The output '
                           f'dst tile must have the same data type as that of data" (the nki.isa.nc_transpose page): '
                           f'give dst the format of data (a {source.public} PSUM tile) and convert when copying it '
                           f'out, or transpose a {destination.public} copy of data', _line())


def _check_transpose_destination(result: Any, target: Any) -> None:
    """A Beta 2 `nisa.nc_transpose(dst, data)` that only the Tensor Engine can run (data beyond 32x32, or
    engine=nisa.tensor_engine) writes PSUM: "Tensor Engine nc_transpose must read the input tile from SBUF and write
    the transposed result to PSUM. Vector Engine nc_transpose can read/write from/to either SBUF or PSUM", and the
    Vector Engine takes tiles of at most 32x32 (the nki.isa.nc_transpose page). An SBUF dst for such a transpose has
    no engine to run on; the Beta 1 form `sbuf_tile[...] = nisa.nc_transpose(t)` keeps the copy its compiler adds."""
    pending = getattr(result, 'pending', None)
    buffer = target.tensor.buffer
    if pending is not None and pending.eng == 'pe' and buffer is not memory.psum:
        free, parts = result.shape[0], result.shape[1]
        raise CompileError(f'nisa.nc_transpose of a [{parts}, {free}] tile into {buffer.name}: "Tensor Engine '
                           f'nc_transpose must read the input tile from SBUF and write the transposed result to PSUM", '
                           f'and a Vector Engine transpose, which may write SBUF, takes tiles of at most 32x32 (the '
                           f'nki.isa.nc_transpose page): give dst buffer=nl.psum and copy it out with '
                           f'nisa.tensor_copy', _line())


def _line() -> int:
    return runtime.RUN.line() if runtime.RUN is not None else 0


def check_module(prefix: str, namespace: Dict[str, Any], modules: Tuple[str, ...], dst_first: bool,
                 skip: frozenset) -> None:
    """Wrap every public function of an API module namespace (nl or nisa) with `checked`."""
    for name, value in list(namespace.items()):
        if inspect.isfunction(value) and not name.startswith('_') and name not in skip \
                and value.__module__ in modules:
            namespace[name] = checked(f'{prefix}.{name}', value, dst_first)
