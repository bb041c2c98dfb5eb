"""vectorize_loop: do all iterations of an innermost loop of independent tile work at once.

`for h in nl.affine_range(H)` whose body loads 2-D [P, W] tiles at offsets that move with h, works on them
element-wise and stores the results becomes straight-line code on [P, H, W] tiles: the loop variable is replaced
by an index axis `h_all = nl.arange(H)[None, :, None]`, each load and store of a moving region becomes one
access over all H blocks, and each element-wise step one instruction over all of them. Tiles that do not move
with h (loaded in the loop at a fixed offset, or bound before it) are read with a stride-0 index along the new
axis. Fewer, larger instructions: the per-instruction overhead of every engine is paid once instead of H times.
"""
import ast
import copy
from typing import Dict, List, Optional, Set, Tuple, Union

from ..const_eval import const_int
from ..index_forms import index_components, make_index
from ..kernel_ast import KernelSource, Loop, RewriteError, fresh_name, names_bound, names_read, snippet, substitute
from .base import Applied, Candidate, Params, Transformation
from .common import call_arg, count_binds, load_call, store_call
from .operand_kinds import OperandKinds

ELEMENTWISE = ('add', 'subtract', 'multiply', 'divide', 'maximum', 'minimum', 'power', 'exp', 'log', 'sigmoid',
               'tanh', 'silu', 'gelu', 'relu', 'sqrt', 'rsqrt', 'abs', 'negative', 'square', 'copy', 'reciprocal')
ALLOCATORS = ('ndarray', 'zeros')
DEFAULT_MAX_BYTES_PP = 65536
BYTES_PER_ELEMENT = 4

# A polynomial over names and opaque sub-expressions: monomial (sorted factor keys) -> integer coefficient.
Poly = Dict[Tuple[str, ...], int]
# The 2-D shape [P, W] of a tile before vectorization, as polynomials, with the expressions of opaque factors.
Shape = Tuple[Poly, Poly]


class _Polys:
    """Polynomial forms of index expressions (enough to tell that `(h + 1) * D - h * D` is `D`)."""

    def __init__(self, var: str, definitions: Dict[str, ast.expr]) -> None:
        self.var = var
        self.definitions = definitions   # scalar names bound once in the kernel -> their value
        self.exprs: Dict[str, ast.expr] = {}
        self.expanding: Set[str] = set()

    def of(self, node: ast.expr) -> Optional[Poly]:
        """The polynomial of node, or None when the loop variable appears in a non-polynomial part."""
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return {(): node.value} if node.value else {}
        if isinstance(node, ast.Name):
            value = self.definitions.get(node.id)
            if value is not None and node.id not in self.expanding:
                self.expanding.add(node.id)
                try:
                    expanded = self.of(value)
                finally:
                    self.expanding.discard(node.id)
                if expanded is not None and all(len(m) <= 1 and m[:1] != (node.id,) for m in expanded):
                    return expanded
            return {(node.id,): 1}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.of(node.operand)
            return None if inner is None else _scale(inner, -1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            left, right = self.of(node.left), self.of(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Mult):
                return _mul(left, right)
            return _add(left, right, 1 if isinstance(node.op, ast.Add) else -1)
        if self.var in names_read(node):
            return None
        key = ast.unparse(node)
        self.exprs[key] = node
        return {(key,): 1}

    def to_ast(self, p: Poly) -> ast.expr:
        out: Optional[ast.expr] = None
        for mono in sorted(p, key=lambda m: (len(m) == 0, m)):
            coef = p[mono]
            term: Optional[ast.expr] = None
            for factor in mono:
                f = copy.deepcopy(self.exprs[factor]) if factor in self.exprs else ast.Name(id=factor, ctx=ast.Load())
                term = f if term is None else ast.BinOp(left=term, op=ast.Mult(), right=f)
            if term is None:
                term = ast.Constant(abs(coef))
            elif abs(coef) != 1:
                term = ast.BinOp(left=term, op=ast.Mult(), right=ast.Constant(abs(coef)))
            if out is None:
                out = term if coef > 0 else ast.UnaryOp(op=ast.USub(), operand=term)
            else:
                out = ast.BinOp(left=out, op=ast.Add() if coef > 0 else ast.Sub(), right=term)
        return out if out is not None else ast.Constant(0)


def _scale(p: Poly, f: int) -> Poly:
    return {m: c * f for m, c in p.items() if c * f}


def _add(a: Poly, b: Poly, sign: int) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
        if out[m] == 0:
            del out[m]
    return out


def _mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + ca * cb
            if out[m] == 0:
                del out[m]
    return out


def _arange(src: KernelSource, width: ast.expr, axis: int) -> ast.expr:
    """nl.arange(width) along axis 0 (partition), 1 (the new axis) or 2 (free) of a 3-D index."""
    call = ast.Call(func=ast.Attribute(value=ast.Name(id=src.nl_alias(), ctx=ast.Load()), attr='arange',
                                       ctx=ast.Load()), args=[width], keywords=[])
    none = ast.Constant(None)
    full = ast.Slice(lower=None, upper=None, step=None)
    elts: List[ast.expr] = [copy.deepcopy(none) for _ in range(3)]
    elts[axis] = full
    return ast.Subscript(value=call, slice=ast.Tuple(elts=elts, ctx=ast.Load()), ctx=ast.Load())


def _plus(a: ast.expr, b: ast.expr) -> ast.expr:
    if isinstance(a, ast.Constant) and a.value == 0:
        return b
    return ast.BinOp(left=a, op=ast.Add(), right=b)


class _Vectorizer:
    """Rewrites the body of one loop; every method raises RewriteError with the reason it cannot."""

    def __init__(self, src: KernelSource, loop: Loop, params: Params) -> None:
        self.src = src
        self.loop = loop
        if loop.kind != 'affine_range' or loop.var is None:
            raise RewriteError(f'{loop.describe()} is not an nl.affine_range loop over one name (only its '
                               'iterations are independent)')
        trip = loop.trip()
        if trip is None:
            raise RewriteError(f'{loop.describe()} does not start at 0 with step 1')
        self.var: str = loop.var
        self.trip: ast.expr = trip
        self.polys = _Polys(self.var, _definitions(src, loop))
        self.max_bytes = int(params.get('max_bytes_pp', DEFAULT_MAX_BYTES_PP))
        body = loop.node.body
        bound = names_bound(body)
        if names_read(trip) & (bound | {self.var}):
            raise RewriteError(f'the trip count {ast.unparse(trip)} uses a name bound in the loop')
        for stmt in body:
            if not isinstance(stmt, (ast.Assign, ast.Expr)):
                raise RewriteError(f'{src.filename}:{stmt.lineno}: the loop body is not straight-line tile code '
                                   f'(`{ast.unparse(stmt).splitlines()[0]}`)')
        for name in bound:
            if count_binds(name, body) != 1:
                raise RewriteError(f'{name} is bound more than once in the loop')
        outside = [n for n in ast.walk(src.func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                   and n.id in bound and not _inside(n, loop.node)]
        if outside:
            raise RewriteError(f'{outside[0].id} is used after the loop (its last iteration\'s value)')
        self.kinds = OperandKinds(src)
        self.axis_name = fresh_name(src, f'{self.var}_all')
        self.vec: Dict[str, Shape] = {}     # loop-local tiles that gain the new axis
        self.fixed: Set[str] = set()         # tiles that do not move with the loop variable
        self.moving_loads = 0

    # ----- index conversion -----
    def _poly(self, node: Optional[ast.expr], default: int = 0) -> Poly:
        if node is None:
            return {(): default} if default else {}
        p = self.polys.of(node)
        if p is None:
            raise RewriteError(f'the index expression {ast.unparse(node)} is not a polynomial in {self.var}')
        return p

    def _width(self, comp: ast.Slice) -> Poly:
        if comp.upper is None or comp.step is not None:
            raise RewriteError(f'the slice {ast.unparse(comp)} has no upper bound or has a step')
        width = _add(self._poly(comp.upper), self._poly(comp.lower), -1)
        if any(self.var in m for m in width):
            raise RewriteError(f'the width of {ast.unparse(comp)} changes with {self.var}')
        return width

    def _moving_index(self, sub: ast.Subscript) -> Tuple[ast.expr, Shape]:
        """The 3-D index of an HBM access whose region moves with the loop variable, and its 2-D shape."""
        comps = index_components(sub)
        if len(comps) != 2 or not all(isinstance(c, ast.Slice) for c in comps):
            raise RewriteError(f'{ast.unparse(sub)} is not a 2-D access by two slices `a:b`')
        new: List[ast.expr] = []
        widths: List[Poly] = []
        for axis, comp in zip((0, 2), comps):
            assert isinstance(comp, ast.Slice)
            lower = self._poly(comp.lower)
            if any(m.count(self.var) > 1 for m in lower):
                raise RewriteError(f'the offset {ast.unparse(comp)} is not linear in {self.var}')
            width = self._width(comp)
            widths.append(width)
            base = substitute(comp.lower, {self.var: ast.Name(id=self.axis_name, ctx=ast.Load())}) \
                if comp.lower is not None else ast.Constant(0)
            new.append(_plus(base, _arange(self.src, self.polys.to_ast(width), axis)))
        return make_index(new), (widths[0], widths[1])

    def _local_view(self, sub: ast.Subscript, shape: Shape) -> Tuple[ast.Subscript, Shape]:
        """t[a:b, c:d] of a vectorized tile -> t[a:b, :, c:d], and the view's 2-D shape."""
        comps = index_components(sub)
        if len(comps) != 2 or not all(isinstance(c, ast.Slice) for c in comps):
            raise RewriteError(f'{ast.unparse(sub)} is not a view by two slices')
        if self.var in names_read(sub.slice):
            raise RewriteError(f'{ast.unparse(sub)} indexes a tile of the loop with {self.var}')
        widths = []
        for comp, full in zip(comps, shape):
            assert isinstance(comp, ast.Slice)
            widths.append(full if comp.lower is None and comp.upper is None else self._width(comp))
        elts = [copy.deepcopy(comps[0]), ast.Slice(lower=None, upper=None, step=None), copy.deepcopy(comps[1])]
        return (ast.Subscript(value=copy.deepcopy(sub.value), slice=ast.Tuple(elts=elts, ctx=ast.Load()),
                              ctx=sub.ctx), (widths[0], widths[1]))

    def _broadcast(self, node: ast.expr, shape: Shape) -> ast.expr:
        """A fixed tile read as [P, H, W] with a stride-0 index along the new axis."""
        name: ast.expr
        lowers: List[ast.expr]
        if isinstance(node, ast.Name):
            name, lowers = node, [ast.Constant(0), ast.Constant(0)]
        else:
            assert isinstance(node, ast.Subscript)
            comps = index_components(node)
            if len(comps) != 2 or not all(isinstance(c, ast.Slice) for c in comps):
                raise RewriteError(f'{ast.unparse(node)} is not a view by two slices')
            lowers = []
            for comp, full in zip(comps, shape):
                assert isinstance(comp, ast.Slice)
                if not (comp.lower is None and comp.upper is None) and self._width(comp) != full:
                    raise RewriteError(f'{ast.unparse(node)} does not have the shape of the other operands')
                lowers.append(comp.lower if comp.lower is not None else ast.Constant(0))
            name = node.value
        zero = ast.BinOp(left=ast.Constant(0), op=ast.Mult(), right=ast.Name(id=self.axis_name, ctx=ast.Load()))
        part = _plus(copy.deepcopy(lowers[0]), _arange(self.src, self.polys.to_ast(shape[0]), 0))
        free = _plus(zero, _plus(copy.deepcopy(lowers[1]), _arange(self.src, self.polys.to_ast(shape[1]), 2)))
        return ast.Subscript(value=copy.deepcopy(name), slice=ast.Tuple(elts=[part, free], ctx=ast.Load()),
                             ctx=ast.Load())

    # ----- expressions -----
    def _operand(self, node: ast.expr) -> Tuple[Optional[ast.expr], Optional[Shape]]:
        """(new node, shape) of a vectorized operand; (None, None) for a fixed tile (broadcast later); the
        node itself and no shape for a scalar."""
        base = node.value.id if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) else \
            node.id if isinstance(node, ast.Name) else None
        if base in self.vec:
            if isinstance(node, ast.Name):
                return copy.deepcopy(node), self.vec[base]
            assert isinstance(node, ast.Subscript)
            return self._local_view(node, self.vec[base])
        if base is not None and (base in self.fixed or self.kinds.kind(node) in ('tile', 'psum')):
            if base not in self.fixed and base in names_bound(self.loop.node.body):
                raise RewriteError(f'{ast.unparse(node)}: a tile of the loop that is neither loaded nor computed')
            return None, None
        if isinstance(node, ast.Call):
            return self._call(node)
        if self.var in names_read(node):
            raise RewriteError(f'{ast.unparse(node)} uses {self.var} outside a load or store index')
        if self.kinds.kind(node) != 'scalar':
            raise RewriteError(f'cannot tell whether {ast.unparse(node)} is a tile or a scalar')
        return copy.deepcopy(node), None

    def _call(self, call: ast.Call) -> Tuple[ast.expr, Optional[Shape]]:
        name = self.src.call_name(call) or ''
        if not (name.startswith('nl.') and name[3:] in ELEMENTWISE):
            raise RewriteError(f'`{ast.unparse(call)}` is not an element-wise nl operation')
        for k in call.keywords:
            if k.arg != 'dtype':
                raise RewriteError(f'`{ast.unparse(call)}` has the keyword {k.arg} (only dtype is supported)')
        converted = [self._operand(a) for a in call.args]
        shapes = [s for _, s in converted if s is not None]
        if not shapes:
            if any(n is None for n, _ in converted):
                raise RewriteError(f'`{ast.unparse(call)}` works only on tiles that do not move with {self.var}')
            raise RewriteError(f'`{ast.unparse(call)}` has no tile operand')
        shape = shapes[0]
        if any(s != shape for s in shapes[1:]):
            raise RewriteError(f'the operands of `{ast.unparse(call)}` do not have one shape')
        args = [n if n is not None else self._broadcast(a, shape) for (n, _), a in zip(converted, call.args)]
        return ast.Call(func=copy.deepcopy(call.func), args=args, keywords=copy.deepcopy(call.keywords)), shape

    # ----- statements -----
    def statement(self, stmt: ast.stmt) -> ast.stmt:
        load = load_call(self.src, stmt)
        if load is not None:
            loaded, call, sub = load
            if any(k.arg not in ('src', 'dtype') for k in call.keywords):
                raise RewriteError(f'{self.src.filename}:{stmt.lineno}: the load has keywords other than dtype')
            if self.var not in names_read(sub):
                self.fixed.add(loaded)
                return stmt
            index, shape = self._moving_index(sub)
            self._check_size(shape, stmt)
            self.vec[loaded] = shape
            self.moving_loads += 1
            new_call = ast.Call(func=copy.deepcopy(call.func),
                                args=[ast.Subscript(value=copy.deepcopy(sub.value), slice=index, ctx=ast.Load())],
                                keywords=[copy.deepcopy(k) for k in call.keywords if k.arg == 'dtype'])
            return ast.Assign(targets=[ast.Name(id=loaded, ctx=ast.Store())], value=new_call, lineno=stmt.lineno)
        store = store_call(self.src, stmt)
        if store is not None:
            return self._store(stmt, store)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            called = self.src.call_name(stmt.value) or ''
            if isinstance(target, ast.Name) and called[3:] in ALLOCATORS and called.startswith('nl.'):
                return self._allocation(stmt, target.id, stmt.value)  # type: ignore[arg-type]
            if isinstance(stmt.value, ast.Call) and isinstance(target, ast.Name):
                if self.var not in names_read(stmt.value) and not (names_read(stmt.value) & set(self.vec)):
                    self.fixed.add(target.id)
                    return stmt
                value, moved = self._call(stmt.value)
                assert moved is not None
                self.vec[target.id] = moved
                return ast.Assign(targets=[copy.deepcopy(target)], value=value, lineno=stmt.lineno)
            if isinstance(stmt.value, ast.Call) and isinstance(target, ast.Subscript) and \
                    isinstance(target.value, ast.Name) and target.value.id in self.vec:
                view, view_shape = self._local_view(target, self.vec[target.value.id])
                value, value_shape = self._call(stmt.value)
                if value_shape != view_shape:
                    raise RewriteError(f'{self.src.filename}:{stmt.lineno}: the value does not have the shape of '
                                       f'{ast.unparse(target)}')
                return ast.Assign(targets=[view], value=value, lineno=stmt.lineno)
        raise RewriteError(f'{self.src.filename}:{stmt.lineno}: `{ast.unparse(stmt).splitlines()[0]}` is not a '
                           'load, an SBUF allocation, an element-wise operation or a store')

    def _allocation(self, stmt: ast.Assign, target: str, call: ast.Call) -> ast.stmt:
        shape = call.args[0] if call.args else call_arg(call, None, 'shape')
        buffer = call_arg(call, None, 'buffer')
        if buffer is None or not ast.unparse(buffer).endswith('sbuf'):
            raise RewriteError(f'{self.src.filename}:{stmt.lineno}: {target} is not an SBUF tile')
        if not isinstance(shape, ast.Tuple) or len(shape.elts) != 2:
            raise RewriteError(f'{self.src.filename}:{stmt.lineno}: {target} is not a 2-D tile')
        if self.var in names_read(shape):
            raise RewriteError(f'{self.src.filename}:{stmt.lineno}: the shape of {target} uses {self.var}')
        dims = (self._poly(shape.elts[0]), self._poly(shape.elts[1]))
        self._check_size(dims, stmt)
        self.vec[target] = dims
        new = copy.deepcopy(call)
        new_shape = ast.Tuple(elts=[copy.deepcopy(shape.elts[0]), copy.deepcopy(self.trip),
                                    copy.deepcopy(shape.elts[1])], ctx=ast.Load())
        if call.args:
            new.args[0] = new_shape
        else:
            new.keywords = [ast.keyword(arg='shape', value=new_shape) if k.arg == 'shape' else k
                            for k in new.keywords]
        return ast.Assign(targets=copy.deepcopy(stmt.targets), value=new, lineno=stmt.lineno)

    def _store(self, stmt: ast.stmt, store: Tuple[ast.Call, ast.Subscript, ast.expr]) -> ast.stmt:
        call, sub, value = store
        if self.var not in names_read(sub):
            raise RewriteError(f'{self.src.filename}:{stmt.lineno}: every iteration stores to the same region')
        if any(k.arg not in ('dst', 'value') for k in call.keywords) or len(call.args) + len(call.keywords) != 2:
            raise RewriteError(f'{self.src.filename}:{stmt.lineno}: the store has keywords other than value')
        index, shape = self._moving_index(sub)
        new_value, value_shape = self._operand(value)
        if new_value is None or value_shape != shape:
            raise RewriteError(f'{self.src.filename}:{stmt.lineno}: the stored value is not a tile of the loop of '
                               'the stored region\'s shape')
        dest = ast.Subscript(value=copy.deepcopy(sub.value), slice=index, ctx=ast.Load())
        new_call = ast.Call(func=copy.deepcopy(call.func), args=[dest],
                            keywords=[ast.keyword(arg='value', value=new_value)])
        return ast.Expr(value=new_call, lineno=stmt.lineno)

    def _check_size(self, shape: Shape, stmt: ast.stmt) -> None:
        n = const_int(self.trip)
        width = self.polys.to_ast(shape[1])
        w = const_int(width) if not names_read(width) else None
        if n is not None and w is not None and n * w * BYTES_PER_ELEMENT > self.max_bytes:
            raise RewriteError(f'{self.src.filename}:{stmt.lineno}: the vectorized tile would need '
                               f'{n * w * BYTES_PER_ELEMENT} bytes per partition (limit {self.max_bytes})')

    def run(self) -> List[ast.stmt]:
        body = [self.statement(s) for s in self.loop.node.body]
        if not self.moving_loads:
            raise RewriteError(f'no load in {self.loop.describe()} moves with {self.var}')
        if self.var in {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)}:
            raise RewriteError(f'{self.var} is used outside the load and store indices')
        axis = ast.Assign(targets=[ast.Name(id=self.axis_name, ctx=ast.Store())],
                          value=_arange(self.src, copy.deepcopy(self.trip), 1), lineno=self.loop.node.lineno)
        return [axis] + body


def _definitions(src: KernelSource, loop: Loop) -> Dict[str, ast.expr]:
    """Names bound exactly once in the kernel, outside the loop, by an arithmetic expression of other names."""
    body = src.func.body
    out: Dict[str, ast.expr] = {}
    for node in ast.walk(src.func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, (ast.BinOp, ast.Constant, ast.Name)) and not _inside(node, loop.node) \
                and count_binds(node.targets[0].id, body) == 1:
            out[node.targets[0].id] = node.value
    return out


def _inside(node: ast.AST, tree: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))


class VectorizeLoop(Transformation):
    id = 'vectorize_loop'
    site_kind = 'L'
    summary = ('Do every iteration of an innermost nl.affine_range loop of loads, element-wise steps and stores at '
               'once: the loop variable becomes a tile axis (nl.arange), so each load, store and element-wise '
               'step is one instruction over all iterations instead of one per iteration.')
    params_doc = {'max_bytes_pp': 'largest vectorized tile, bytes per partition, when it is known (default 65536)'}

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        for loop in src.loops():
            if loop.kind != 'affine_range' or any(isinstance(n, ast.For) for s in loop.node.body
                                                  for n in ast.walk(s)):
                continue
            probe = copy.deepcopy(src)
            try:
                _Vectorizer(probe, _same_loop(probe, loop), {}).run()
            except RewriteError:
                continue
            out.append(Candidate(self.id, loop.site,
                                 f'do all {loop.trip_text()} iterations of the loop over {loop.var} ({loop.site}) '
                                 'at once: one load, element-wise instruction and store per step over a '
                                 f'[P, {loop.trip_text()}, W] tile'))
        return out

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        loop = src.loop_at(site)
        if any(isinstance(n, ast.For) for s in loop.node.body for n in ast.walk(s)):
            raise RewriteError(f'{loop.describe()} is not an innermost loop')
        before = snippet(loop.node)
        new = _Vectorizer(src, loop, params).run()
        loop.body[loop.index:loop.index + 1] = new
        return Applied(f'vectorized {loop.describe()}: its loads, element-wise steps and stores now run once over '
                       f'[P, {loop.trip_text()}, W] tiles indexed by `{snippet(new[0]).split(" =")[0]}`',
                       before, snippet(new))


def _same_loop(src: KernelSource, loop: Loop) -> Loop:
    for other in src.loops():
        if other.site == loop.site:
            return other
    raise RewriteError(f'no loop at {loop.site}')
