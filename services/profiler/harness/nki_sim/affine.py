"""Affine index expressions built from nl.arange, and the predicates (masks) built by comparing them.

An `Affine` is c + sum_k coef_k * j_k, where each j_k runs over 0..size_k-1 along one broadcast axis. Axes are
numbered from the right (`rax`), exactly like numpy broadcasting: `nl.arange(128)[:, None]` is the axis rax=1 of a
2-D pattern and `nl.arange(8)[None, :, None]` the axis rax=1 of a 3-D one, so the two combine the way numpy
advanced indices do. Loop variables are plain ints and fold into `c`.

A `Predicate` is a conjunction of `affine >= 0` (and rarely `affine != 0`) atoms; `mask_window` turns it into a
per-axis [lo, hi) window over an instruction's iteration space, or a boolean array when atoms span several axes.
"""
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from .errors import CompileError, UnsupportedApi


class Affine:
    __slots__ = ('c', 'terms', 'ndim', 'placements', 'grid')

    def __init__(self, c, terms, ndim, grid=None):
        self.c = c
        self.terms = terms          # tuple of (rax, coef, size), at most one entry per rax
        self.ndim = ndim
        self.placements = None      # cache of self[...] results (nl.arange objects are shared)
        # nl.mgrid's full shape for expressions over one mgrid (numpy's dense mesh grid: grid.x of
        # nl.mgrid[0:128, 0:n] spans [128, n] as an nisa.iota operand); indexing uses `shape`, the axes spanned
        self.grid = grid

    # ----- arithmetic -----
    def __add__(self, other):
        if isinstance(other, int):
            return Affine(self.c + other, self.terms, self.ndim, self.grid)
        if isinstance(other, Affine):
            return _merge(self, other, 1)
        return NotImplemented

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, int):
            return Affine(self.c - other, self.terms, self.ndim, self.grid)
        if isinstance(other, Affine):
            return _merge(self, other, -1)
        return NotImplemented

    def __rsub__(self, other):
        if isinstance(other, int):
            return Affine(other - self.c, tuple((r, -k, n) for r, k, n in self.terms), self.ndim, self.grid)
        return NotImplemented

    def __neg__(self):
        return self * -1

    def __mul__(self, other):
        if isinstance(other, int):
            return Affine(self.c * other, tuple((r, k * other, n) for r, k, n in self.terms), self.ndim, self.grid)
        if hasattr(other, 'shape') and hasattr(other, 'dtype') and not isinstance(other, np.ndarray):
            return NotImplemented       # `i_f * t` of a tile: the tile's operator computes with the values
        raise CompileError('index expressions must be affine: only integer scaling of nl.arange is supported')

    __rmul__ = __mul__

    def __floordiv__(self, other):
        raise CompileError('index expressions must be affine: // is not supported on nl.arange')

    __mod__ = __floordiv__

    def __iter__(self):
        # without this, Python iterates through __getitem__ (placement), and `for i in nl.arange(n)` fails later
        # with an unrelated message
        raise CompileError('nl.arange(...) is an index expression, not a loop range: iterate with '
                           'nl.affine_range(n), nl.sequential_range(n) or range(n)')

    # ----- placement and subscripts: nl.arange(n)[:, None], i_p[:64, :1] -----
    def __getitem__(self, key):
        """numpy's basic indexing of the index values: None adds an axis, a slice narrows one (`nl.arange(128)[:64]`,
        `i_p[:TILE_M, :1]` of a placed [128, 1] expression), an integer picks one index and drops the axis. The
        common placements of a 1-D nl.arange (only None and one full `:`) are cached: arange objects are shared."""
        if type(key) is not tuple:
            key = (key,)
        if self.ndim == 1:
            position = _placement(key)
            if position is not None:
                cache = self.placements
                if cache is None:
                    cache = self.placements = {}
                placed = cache.get((len(key), position))
                if placed is None:
                    rax = len(key) - 1 - position
                    placed = cache[(len(key), position)] = Affine(
                        self.c, tuple((rax, k, n) for _, k, n in self.terms), len(key))
                return placed
        c, terms, shape = subscript_terms(self.c, self.terms, self.ndim, self.dense_shape, key)
        if not shape:
            return c        # every axis picked: one index, an int as in numpy
        # an mgrid component is dense (numpy's mesh grid): its subscript keeps the subscripted grid
        return Affine(c, terms, len(shape), shape if self.grid is not None and len(self.grid) == self.ndim else None)

    def __getattr__(self, name):
        """An attribute index expressions do not have (numpy's `.T` on `nl.arange(n)[:, None]`): a COMPILE_ERROR
        naming it, also an AttributeError (hasattr() answers False), like the tiles' (tile_ops.TileOperators)."""
        if name.startswith('_'):
            raise AttributeError(name)
        raise UnsupportedApi(f'index expression attribute .{name} is not supported by the simulator: nl.arange / '
                             'nl.mgrid expressions are not numpy arrays (the nl.arange page documents no attributes '
                             'of its result); place the index on the other axis with nl.arange(n)[None, :] or '
                             'nl.arange(n)[:, None]')

    @property
    def dense_shape(self) -> Tuple[int, ...]:
        """The shape of the values as a tile: the mgrid's full shape for an expression over one mgrid."""
        return self.grid if self.grid is not None and len(self.grid) == self.ndim else self.shape

    @property
    def shape(self) -> Tuple[int, ...]:
        shape = [1] * self.ndim
        for rax, _, size in self.terms:
            shape[self.ndim - 1 - rax] = size
        return tuple(shape)

    def evaluate(self) -> np.ndarray:
        """The index values as a numpy int64 array of `shape`."""
        out = np.full(self.shape, self.c, dtype=np.int64)
        for rax, coef, size in self.terms:
            view = [1] * self.ndim
            view[self.ndim - 1 - rax] = size
            out = out + coef * np.arange(size, dtype=np.int64).reshape(view)
        return out

    # ----- comparisons build masks -----
    def __ge__(self, other):
        return Predicate(((self - other, 'ge'),))

    def __gt__(self, other):
        return Predicate(((self - other - 1, 'ge'),))

    def __le__(self, other):
        return Predicate(((other - self, 'ge'),))

    def __lt__(self, other):
        return Predicate(((other - self - 1, 'ge'),))

    def __eq__(self, other):
        diff = self - other
        return Predicate(((diff, 'ge'), (-diff, 'ge')))

    def __ne__(self, other):
        return Predicate(((self - other, 'ne'),))

    __hash__ = None  # type: ignore[assignment]  # == builds a Predicate: unhashable

    def __repr__(self):
        return f'Affine(c={self.c}, terms={self.terms}, ndim={self.ndim})'


_FULL = slice(None)


def _placement(key: Tuple[Any, ...]) -> Optional[int]:
    """The position of the one full `:` in a placement of a 1-D expression (`[:, None]`, `[None, :, None]`), None
    for any other subscript. The hot path: kernels place aranges inside their loops."""
    if len(key) == 2:
        first, second = key
        if second is None and first.__class__ is slice and first == _FULL:
            return 0
        if first is None and second.__class__ is slice and second == _FULL:
            return 1
        return None
    position = None
    for i, k in enumerate(key):
        if k is None:
            continue
        if position is not None or k.__class__ is not slice or k != _FULL:
            return None
        position = i
    return position


def subscript_terms(c: int, terms: Tuple[Tuple[int, int, int], ...], ndim: int, shape: Tuple[int, ...],
                    key: Tuple[Any, ...]) -> Tuple[int, Tuple[Tuple[int, int, int], ...], Tuple[int, ...]]:
    """numpy basic indexing of c + sum coef * j over `shape` (ndim axes; an axis may have no term, or a term of
    size 1, while `shape`, a predicate's broadcast shape or an mgrid's dense one, is wider there): (c, terms, shape)
    of the result. A slice of one index folds into c, so every term left spans at least two indices."""
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, slice)
                or isinstance(k, (int, np.integer)) and not isinstance(k, bool)):
            raise CompileError('an index expression (nl.arange / nl.mgrid, or a comparison of them) is subscripted '
                               f'with slices, integers, None and ... only (got a value of type {type(k).__name__})')
    if sum(k is Ellipsis for k in key) > 1:
        raise CompileError('an index expression subscript may hold one ... only')
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used > ndim:
        raise CompileError(f'too many indices for an index expression of {ndim} dimensions: {used} given')
    if any(k is Ellipsis for k in key):
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (slice(None),) * (ndim - used) + key[at + 1:]
    else:
        key = key + (slice(None),) * (ndim - used)
    by_rax = {rax: (coef, size) for rax, coef, size in terms}
    placed = []                 # (output position, coef, size) for each axis the result keeps a term on
    out_shape = []
    axis = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        coef, size = by_rax.get(ndim - 1 - axis, (0, 1))
        if size == 1:
            coef = 0            # a term over one index is 0 there, however wide the axis it broadcasts along
        extent = shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(extent)
            count = len(range(start, stop, step))
            if count == 0:
                raise CompileError(f'the subscript {_slice_text(k)} of an index expression selects no index of '
                                   f'an axis of {extent}')
            c += coef * start
            if coef and count > 1:
                placed.append((len(out_shape), coef * step, count))
            out_shape.append(count)
        else:
            if not -extent <= k < extent:
                raise CompileError(f'index {int(k)} is out of bounds for an index expression axis of {extent}')
            c += coef * (int(k) % extent)
        axis += 1
    out_ndim = len(out_shape)
    return c, tuple(sorted((out_ndim - 1 - position, coef, size) for position, coef, size in placed)), \
        tuple(out_shape)


def _slice_text(k: slice) -> str:
    parts = ['' if v is None else str(v) for v in (k.start, k.stop, k.step)]
    return ':'.join(parts[:2] if k.step is None else parts)


def _merge(a, b, sign):
    coefs = {r: (k, n) for r, k, n in a.terms}
    for r, k, n in b.terms:
        if r in coefs:
            k0, n0 = coefs[r]
            if n0 != n:
                raise CompileError(f'index expressions combine aranges of sizes {n0} and {n} on one axis')
            coefs[r] = (k0 + sign * k, n)
        else:
            coefs[r] = (sign * k, n)
    terms = tuple(sorted((r, k, n) for r, (k, n) in coefs.items()))
    grid = a.grid if b.grid is None or b.grid == a.grid else b.grid if a.grid is None else None
    return Affine(a.c + sign * b.c, terms, max(a.ndim, b.ndim), grid)


_ARANGES: Dict[Tuple[int, int, int], 'Affine'] = {}


def arange(start: int, stop: Optional[int] = None, step: int = 1) -> 'Affine':
    """nl.arange: a 1-D affine index start, start+step, ... (< stop)."""
    if stop is None:
        start, stop = 0, start
    key = (start, stop, step)
    found = _ARANGES.get(key)
    if found is None:
        size = max(0, -(-(stop - start) // step))
        found = _ARANGES[key] = Affine(start, ((0, step, size),), 1)
    return found


class MGrid:
    """nl.mgrid[a:b, c:d, ...]: one affine index per axis, unpackable and with .p/.x for the 2-D case."""

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            # "Same as NumPy mgrid" (the nl.mgrid page): one slice gives one index array, np.mgrid[0:4].shape
            # is (4,), not a tuple of one
            return self[key,][0]
        ndim = len(key)
        parts = []
        for part in key:
            start = part.start or 0
            step = part.step or 1
            parts.append((start, step, max(0, -(-(part.stop - start) // step))))
        grid = tuple(size for _, _, size in parts)
        return _Grid([Affine(start, ((ndim - 1 - axis, step, size),), ndim, grid)
                      for axis, (start, step, size) in enumerate(parts)])


class _Grid(tuple):
    def __new__(cls, axes):
        return super().__new__(cls, axes)

    @property
    def p(self) -> Affine:
        return self[0]

    @property
    def x(self) -> Affine:
        return self[1]

    @property
    def y(self) -> Affine:
        return self._axis(2, 'y')

    @property
    def z(self) -> Affine:
        return self._axis(3, 'z')

    def _axis(self, axis: int, name: str) -> Affine:
        if axis >= len(self):
            raise CompileError(f'.{name} is axis {axis} of an nl.mgrid; this mgrid has {len(self)} axes '
                               f'({", ".join("." + n for n in "pxyz"[:len(self)])})')
        return self[axis]


mgrid = MGrid()


class DynamicIndex:
    """An index of an on-chip tile that moves by a value read from SBUF at run time: `nl.ds(off[0, 0], n)`
    (`static` is slice(0, n)), `i_f + off[0, 0]` (`static` is the affine expression) or `off[0, 0]` itself
    (`static` 0). It is a subscript element only; the tile it makes is an operand of the dynamic copies."""
    __slots__ = ('static', 'index')

    def __init__(self, static: Any, index: Any) -> None:
        self.static = static
        self.index = index

    def __repr__(self):
        return f'DynamicIndex({self.static!r} + {self.index!r})'


def index_as_value(value: Any) -> Any:
    """Why `value`, an index expression or a dynamic index, is not a tile operand (None for other values).
    nl.arange is documented "for indexing a tensor to define a tile"; values of an index pattern are built with
    nisa.iota. `t + i_f` of a tile and an index expression is a dynamic index (a subscript element)."""
    if isinstance(value, Affine):
        return ('an nl.arange / nl.mgrid index expression is not a tile: the NKI pages document it for indexing a '
                'tensor ("used for indexing a tensor to define a tile"); build its values as a tile with '
                'nisa.iota(expr, dtype)')
    if isinstance(value, DynamicIndex):
        return ('a tile plus an nl.arange / nl.mgrid index expression is a dynamic index (a subscript of the '
                'dynamic copies), not a tile: index expressions are documented for indexing only; build their '
                'values as a tile with nisa.iota(expr, dtype) first')
    return None


def ds(start: Any, size: int) -> Any:
    """nl.ds: the dynamic-slice spelling of start:start+size; a start read from SBUF (a [1, 1] integer tile,
    `nl.ds(off[0, 0], n)`) is a dynamic offset (a DynamicIndex), an index of nisa.tensor_copy_dynamic_src's
    source or tensor_copy_dynamic_dst's destination."""
    if hasattr(start, 'dtype') and hasattr(start, 'shape') and not isinstance(start, (int, np.integer)):
        return DynamicIndex(slice(0, int(size)), start)
    return slice(start, start + size, 1)


class Predicate:
    """A conjunction of affine comparisons; the value of `mask=` and of affine_select's predicate."""
    __slots__ = ('atoms',)

    def __init__(self, atoms):
        self.atoms = atoms

    def __getitem__(self, key):
        """`(h0 + nl.arange(64) < H)[:, None]`: numpy's indexing of the boolean array the mask stands for, applied to
        each comparison (two public MoE kernels build `mask=(h_mask[:, None] & q_mask[None, :])` so). `__iter__ =
        None` keeps iterating one Python's TypeError (with `__getitem__` alone, Python would iterate it by index)."""
        if type(key) is not tuple:
            key = (key,)
        ndim = max(aff.ndim for aff, _ in self.atoms)
        shapes = [(1,) * (ndim - aff.ndim) + aff.shape for aff, _ in self.atoms]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise CompileError('a mask whose comparisons have shapes that do not broadcast together '
                               f'({", ".join(map(str, shapes))}) cannot be subscripted: numpy\'s indexing needs the '
                               'shape of the whole mask') from None
        atoms = []
        for aff, kind in self.atoms:
            c, terms, out_shape = subscript_terms(aff.c, aff.terms, ndim, shape, key)
            atoms.append((Affine(c, terms, len(out_shape)), kind))
        return Predicate(tuple(atoms))

    __iter__ = None

    def __and__(self, other):
        if isinstance(other, (bool, np.bool_)):
            # a condition on loop variables and constants (`(i_p < n) & (k < K)` with k an affine_range index, an
            # int here, symbolic in NKI's trace): True keeps the mask, False masks everything off
            return self if other else Predicate(self.atoms + ((Affine(-1, (), 1), 'ge'),))
        if not isinstance(other, Predicate):
            raise CompileError('a mask predicate (a comparison of nl.arange / nl.mgrid indices) combines with & only '
                               f'with another predicate, not with a {type(other).__name__}: masks are compile-time '
                               'conditions on indices, not data (select on data with nl.where)')
        return Predicate(self.atoms + other.atoms)

    __rand__ = __and__

    def __or__(self, other):
        raise CompileError('masks combine comparisons with & only: the NKI masking page builds a mask from "comparison '
                           'expressions (e.g., a < b) or multiple comparison expressions concatenated with &"; | has '
                           'no documented meaning in a mask')

    __ror__ = __or__

    def __bool__(self):
        raise CompileError('a mask predicate has no truth value; pass it as mask=')

    def holds_everywhere(self) -> bool:
        """True when every comparison holds at every index its expressions take (a predicate false nowhere)."""
        for aff, kind in self.atoms:
            values = aff.evaluate()
            if not ((values >= 0) if kind == 'ge' else (values != 0)).all():
                return False
        return True

    def evaluate(self, shape: Tuple[int, ...]) -> np.ndarray:
        """The predicate as a boolean array over an iteration space of `shape`."""
        out = np.ones(shape, dtype=bool)
        for aff, kind in self.atoms:
            values = _align(aff, shape).evaluate()
            out &= (values >= 0) if kind == 'ge' else (values != 0)
        return out


def _align(aff, shape):
    return _fit(aff, shape)


def _fit(aff, shape):
    """The mask expression `aff` over an instruction's iteration space of `shape`. Axes are matched numpy-style
    (from the right), with two NKI readings where that cannot be meant: an nl.mgrid with more axes than the
    instruction (its unused axes were dropped from the tile) has its first axis on the partition axis; and a term
    whose size differs from the axis it lands on belongs to the one axis of its size (an index of a smaller grid
    next to a larger one: `x[i_p3, i_f2]` with `i_p3` from a 3-axis grid, `i_f2` from a 2-axis one)."""
    ndim = len(shape)
    terms = []
    changed = aff.ndim != ndim
    for rax, coef, size in aff.terms:
        if aff.ndim > ndim:
            if rax == aff.ndim - 1:
                rax = ndim - 1
            elif rax >= ndim - 1:
                raise CompileError(f'mask has {aff.ndim} index dimensions but the instruction has {ndim}')
        axis = ndim - 1 - rax
        if axis < 0 or size != 1 and shape[axis] != size:
            matches = [a for a in range(ndim) if shape[a] == size]
            if len(matches) == 1:
                rax = ndim - 1 - matches[0]
                changed = True
            elif axis < 0:
                raise CompileError(f'mask has {aff.ndim} index dimensions but the instruction has {ndim}')
        terms.append((rax, coef, size))
    if not changed:
        return aff
    return Affine(aff.c, tuple(sorted(terms)), ndim)


def mask_window(predicate: Any, shape: Sequence[int]) -> Tuple[Any, Optional[np.ndarray]]:
    """Turn a mask into (window, where) over an iteration space of `shape`.

    Conjunctions of single-axis inequalities (all NKIBench masks) become a per-axis [lo, hi) window and
    where=None; any other predicate is evaluated elementwise into a boolean `where` array (window=None).
    """
    ndim = len(shape)
    window = [[0, s] for s in shape]
    for aff, kind in predicate.atoms:
        aff = _fit(aff, shape)
        if any(shape[ndim - 1 - rax] == 1 for rax, _, _ in aff.terms):
            # a term on an axis of extent 1 is the constant 0 (`i_p * FREE + i_f < n` with FREE = 1)
            aff = Affine(aff.c, tuple(t for t in aff.terms if shape[ndim - 1 - t[0]] != 1), ndim)
        if kind != 'ge' or len(aff.terms) > 1:
            return None, predicate.evaluate(shape)
        if not aff.terms:
            if aff.c < 0:
                window[0][1] = window[0][0]
            continue
        rax, coef, _ = aff.terms[0]
        bounds = window[ndim - 1 - rax]
        if coef > 0:
            bounds[0] = max(bounds[0], -(aff.c // coef))          # c + coef*j >= 0  <=>  j >= ceil(-c/coef)
        elif coef < 0:
            bounds[1] = min(bounds[1], aff.c // -coef + 1)        # j <= floor(c/-coef)
        elif aff.c < 0:
            bounds[1] = bounds[0]
    return tuple((lo, max(lo, hi)) for lo, hi in window), None
