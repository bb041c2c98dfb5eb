"""Loop iterators: nl.affine_range, nl.sequential_range, nl.static_range, nl.dynamic_range with int bounds.

All run eagerly in order. Each yields int subclasses that know whether they are the loop's first iteration
(nl.loop_reduce needs that). In Beta 1 kernels affine_range also maintains the run's affine loop context, which the
trace recorder uses to reject writes of the same location from different iterations of one affine loop.
"""
from typing import Any, Dict, Iterator, Optional

import numpy as np

from . import runtime
from .errors import NOT_MODELLED, CompileError, UnsupportedApi
from .tensors import INDEX_INT_TYPES
from .views import RangeIndex


class LoopIndex(int):
    __slots__ = ()
    first = False


class FirstIndex(LoopIndex):
    __slots__ = ()
    first = True


INDEX_INT_TYPES.update((LoopIndex, FirstIndex))


def is_first_iteration(index: int) -> bool:
    return index.first if isinstance(index, LoopIndex) else index == 0


def _bound(value: Any) -> Any:
    """A loop bound: an integral float (`nl.affine_range(in_tensor.shape[0] / nl.tile_size.pmax)`, the NKI tiling
    overview's kernel, where `/` gives 2.0) counts as its integer; any other float is refused by name rather than
    failing as Python's range would."""
    if not isinstance(value, int) and hasattr(value, 'is_integer'):      # float, numpy floats
        if not value.is_integer():
            raise CompileError(f'a loop bound must be an integer, not {value!r}')
        return int(value)
    return value


def _iterate(start, stop, step, unrolled=False):
    """`unrolled` (nl.static_range): the compiler unrolls the loop, so its iterations are straight-line copies in
    the enclosing loop's body and share that body's reuse scope (load reuse and CSE, see compute.py)."""
    if stop is None:
        start, stop = 0, start
    start, stop, step = _bound(start), _bound(stop), _bound(step)
    run = runtime.RUN
    if run is None:
        yield from _plain(start, stop, step)
        return
    run.loop_serial += 1
    loop = run.loop_serial
    outer, outer_scope = run.loop_path, run.reuse_scope
    try:
        first = True
        for i in range(start, stop, step):
            run.loop_path = outer + ((loop, i),)
            run.reuse_scope = outer_scope if unrolled else outer + (loop,)
            yield FirstIndex(i) if first else LoopIndex(i)
            first = False
    finally:
        run.loop_path, run.reuse_scope = outer, outer_scope


def _plain(start, stop, step):
    start, stop, step = _bound(start), _bound(stop), _bound(step)
    first = True
    for i in range(start, stop, step):
        yield FirstIndex(i) if first else LoopIndex(i)
        first = False


class AffineRange(RangeIndex):
    """What nl.affine_range returns: the loop's iterator (the same one-pass iteration as before), which an `import
    nki` kernel may also use, uniterated, as a subscript (`ix = nl.affine_range(a.shape[0]); nl.load(a[ix, iy])`,
    aws-neuron/nkipy's Beta 3 example, which its PR #64 reports verified on trn2 against numpy): there it indexes
    the range it covers, as the slice start:stop:step of its dimension (views.subscript)."""
    __slots__ = ('_iterator', 'bounds', 'beta2')

    def __init__(self, start: Any, stop: Any, step: Any) -> None:
        self._iterator = _affine(start, stop, step)
        self.bounds = (0, start, step) if stop is None else (start, stop, step)
        run = runtime.RUN
        self.beta2 = run is not None and run.beta2

    def __iter__(self) -> Iterator[LoopIndex]:
        return self._iterator

    def __next__(self) -> LoopIndex:
        return next(self._iterator)

    def as_index(self) -> slice:
        if not self.beta2:
            raise CompileError('an nl.affine_range object indexes a tensor only in an `import nki` kernel (the Beta 3 '
                               'frontend indexes the range it covers); a Beta 1 kernel indexes with nl.arange '
                               'expressions, or with the loop index of `for i in nl.affine_range(n)`')
        start, stop, step = (_bound(b) for b in self.bounds)
        return slice(start, stop, step)


def affine_range(start: int, stop: Optional[int] = None, step: int = 1, directives: Any = None,
                 **options: Any) -> AffineRange:
    """Iterations with no loop-carried dependence (except accumulation). `directives` (compiler scheduling hints,
    e.g. nki.compiler.multi_buffer) do not change results and are accepted. In a Beta 2 kernel (`import nki`)
    affine_range is an alias of range (a sequential, unrolled loop; the NKI API page deprecates it), so iterations
    may rewrite a location and no affine loop context is kept; there the object itself may index a tensor
    (AffineRange)."""
    _refuse_options('affine_range', options)
    return AffineRange(start, stop, step)


def _affine(start, stop, step):
    run = runtime.RUN
    if run is None or run.beta2:
        yield from _iterate(start, stop, step)
        return
    loop = run.new_loop()
    outer = run.affine_context
    try:
        for index in _iterate(start, stop, step):
            run.affine_context = outer + ((loop, int(index)),)
            yield index
    finally:
        run.affine_context = outer


def sequential_range(start: int, stop: Optional[int] = None, step: int = 1,
                     directives: Any = None, **options: Any) -> Iterator[LoopIndex]:
    _refuse_options('sequential_range', options)
    return _iterate(start, stop, step)


def static_range(start: int, stop: Optional[int] = None, step: int = 1,
                 directives: Any = None, **options: Any) -> Iterator[LoopIndex]:
    """Unrolled at compile time: runs like sequential_range; reuse is judged in the enclosing loop's body."""
    _refuse_options('static_range', options)
    return _iterate(start, stop, step, unrolled=True)


def dynamic_range(start: Any, stop: Any = None, step: Any = 1, **options: Any) -> Iterator[LoopIndex]:
    """NKI 2.29+ hardware loop (the nl.dynamic_range page, "NKI Dynamic Loops"): start and stop "can be Python int
    literals or VirtualRegister objects", the step "must be a compile-time positive integer". With int bounds the
    trip count is known and the loop runs in order, like sequential_range (the device iterates one copy of the
    body); a bound of any other kind (a register, a tile) is a runtime value, not modelled, refused as before."""
    _refuse_options('dynamic_range', options)
    for bound in (start, stop):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, np.integer))):
            raise UnsupportedApi(f'nl.dynamic_range with a bound of type {type(bound).__name__} is not supported by '
                                 f'the simulator: {NOT_MODELLED["dynamic_range"]}')
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step <= 0:
        raise CompileError(f'nl.dynamic_range: the step must be a compile-time positive integer (its page), got '
                           f'{step!r}')
    return _iterate(int(start), None if stop is None else int(stop), int(step))


def _refuse_options(name: str, options: Dict[str, Any]) -> None:
    """A keyword a loop iterator does not declare is refused like any other nl call's (not a Python TypeError):
    the simulator does not accept arguments it would otherwise ignore."""
    for key in options:
        raise CompileError(f'nl.{name}() got an unexpected keyword argument {key!r} (the simulator refuses '
                           'arguments it would otherwise ignore)')
