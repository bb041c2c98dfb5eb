"""The catalogue of semantics-preserving NKI rewrites.

Each transformation has an id, lists its candidate sites in a kernel (`candidates`), and applies itself at one
site (`apply`) or raises RewriteError with the precise reason it does not apply there. Sites are `L<line>`
(a loop, by the line of its `for`) or `S<line>` (a statement). Legality rules are in the README.
"""
import ast
import copy

from .const_eval import const_int
from .kernel_ast import (Loop, RewriteError, fresh_name, full_slice, index_components, linear,
                         make_index, names_bound, names_mutated, names_read, parse_site, rename, slice_node,
                         snippet, subscript_base, substitute)


class Candidate:
    def __init__(self, transformation, site, description, params=None):
        self.transformation = transformation
        self.site = site
        self.description = description
        self.params = params or {}

    def to_json(self):
        return {'transformation': self.transformation, 'site': self.site, 'description': self.description,
                'params': self.params}


class Applied:
    def __init__(self, description, before, after):
        self.description = description
        self.before = before
        self.after = after


class Transformation:
    id = ''
    summary = ''
    site_kind = 'S'
    params_doc = {}

    def candidates(self, src):
        raise NotImplementedError

    def apply(self, src, site, params):
        raise NotImplementedError


# ----------------------------------------------------------------------------------------------------------
# shared checks

def _load_call(src, stmt):
    """(target name, call, subscript) when stmt is `name = nl.load(tensor[...], ...)`."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        call = stmt.value
        if src.call_name(call) == 'nl.load':
            arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == 'src'), None)
            if isinstance(arg, ast.Subscript):
                return stmt.targets[0].id, call, arg
    return None


def _store_call(src, stmt):
    """(call, destination subscript, value expr) when stmt is `nl.store(tensor[...], value=...)`."""
    if isinstance(stmt, ast.Expr) and src.call_name(stmt.value) == 'nl.store':
        call = stmt.value
        dst = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == 'dst'), None)
        value = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == 'value'),
                                                            None)
        if isinstance(dst, ast.Subscript) and value is not None:
            return call, dst, value
    return None


def _tensors_written(src, stmts):
    """Base names of tensors written by stores, subscript assignments and dma_copy in stmts."""
    out = set(names_mutated(stmts))
    for stmt in stmts:
        for node in ast.walk(stmt):
            name = src.call_name(node)
            if name == 'nl.store':
                dst = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == 'dst'), None)
                if dst is not None and subscript_base(dst):
                    out.add(subscript_base(dst))
            elif name == 'nisa.dma_copy':
                dst = next((k.value for k in node.keywords if k.arg == 'dst'), node.args[0] if node.args else None)
                if dst is not None and subscript_base(dst):
                    out.add(subscript_base(dst))
            elif name and any(k.arg == 'reduce_res' for k in getattr(node, 'keywords', [])):
                for k in node.keywords:
                    if k.arg == 'reduce_res' and subscript_base(k.value):
                        out.add(subscript_base(k.value))
    return out


def _read_before(name, body, index):
    return any(name in names_read(stmt) for stmt in body[:index])


def _count_binds(name, stmts):
    return sum(1 for stmt in stmts for n in ast.walk(stmt)
               if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name)


def _invariance_problem(src, loop, stmt, target, what):
    """Why stmt (which binds `target`, or None) cannot move out of loop, or None when it can."""
    var = loop.var
    used = names_read(stmt)
    if var in used:
        return f"the {what}'s index uses {var}"
    inner = (names_bound(loop.node.body) - {target}) & used
    if inner:
        return f"the {what} uses {', '.join(sorted(inner))}, assigned inside the loop"
    written = _tensors_written(src, [s for s in loop.node.body if s is not stmt])
    bases = {subscript_base(n) for n in ast.walk(stmt) if isinstance(n, ast.Subscript)} - {None}
    clobbered = written & bases
    if clobbered:
        return f"the loop writes {', '.join(sorted(clobbered))}, which the {what} reads"
    if target is not None:
        if _count_binds(target, loop.node.body) > 1:
            return f'{target} is assigned more than once in the loop'
        if target in names_mutated(loop.node.body) or target in _tensors_written(src, loop.node.body):
            return f'{target} is written inside the loop (hoisting would share one buffer across iterations)'
        if _read_before(target, loop.node.body, loop.node.body.index(stmt)):
            return f'{target} is read before the {what} in the loop body'
    return None


def _remove(body, stmt):
    body.remove(stmt)
    if not body:
        body.append(ast.Pass())


def _loop_of_stmt(src, site):
    stmt, body, index, loop = src.statement_at(site)
    if loop is None or body is not loop.node.body:
        raise RewriteError(f'{src.filename}:{stmt.lineno} is not directly inside a loop body')
    return stmt, loop


def _affine_loop_problem(loop):
    if loop.var is None:
        return f'{loop.site}: the loop target is not a single name'
    if not loop.affine:
        return f'{loop.site}: not an affine loop (nl.affine_range / sequential_range / static_range / range)'
    return None


# ----------------------------------------------------------------------------------------------------------

class HoistInvariantLoad(Transformation):
    id = 'hoist_invariant_load'
    summary = 'Move an nl.load whose index does not depend on the loop out of the loop (loaded once).'

    def candidates(self, src):
        out = []
        for loop in src.loops():
            if _affine_loop_problem(loop):
                continue
            for stmt in loop.node.body:
                found = _load_call(src, stmt)
                if found and _invariance_problem(src, loop, stmt, found[0], 'load') is None:
                    out.append(Candidate(self.id, f'S{stmt.lineno}',
                                         f'hoist `{ast.unparse(stmt)}` out of the loop over {loop.var} '
                                         f'({loop.site}): its index does not depend on {loop.var}'))
        return out

    def apply(self, src, site, params):
        if site.startswith('L'):
            loop = src.loop_at(site)
            problem = _affine_loop_problem(loop)
            if problem:
                raise RewriteError(problem)
            reasons = []
            for stmt in loop.node.body:
                found = _load_call(src, stmt)
                if found:
                    why = _invariance_problem(src, loop, stmt, found[0], 'load')
                    if why is None:
                        return self._move(src, loop, stmt)
                    reasons.append(f'{found[0]}: {why}')
            detail = f" ({'; '.join(reasons)})" if reasons else ' (no nl.load directly in its body)'
            raise RewriteError(f'no loop-invariant nl.load in {loop.describe()}{detail}')
        stmt, loop = _loop_of_stmt(src, site)
        found = _load_call(src, stmt)
        if not found:
            raise RewriteError(f'{src.filename}:{stmt.lineno} is not `name = nl.load(tensor[...])`')
        problem = _affine_loop_problem(loop)
        why = problem or _invariance_problem(src, loop, stmt, found[0], 'load')
        if why:
            raise RewriteError(f'cannot hoist the nl.load of {found[0]} at {src.filename}:{stmt.lineno} out of '
                               f'{loop.describe()}: {why}')
        return self._move(src, loop, stmt)

    def _move(self, src, loop, stmt):
        before = snippet(loop.node)
        _remove(loop.node.body, stmt)
        loop.body.insert(loop.index, stmt)
        return Applied(f'hoisted `{ast.unparse(stmt)}` out of the loop over {loop.var} ({loop.site}); it now '
                       'runs once instead of once per iteration', before, snippet([stmt, loop.node]))


class HoistInvariantStore(Transformation):
    id = 'hoist_invariant_store'
    summary = 'Sink an nl.store whose destination and value do not change in the loop to after the loop.'

    def candidates(self, src):
        out = []
        for loop in src.loops():
            if _affine_loop_problem(loop):
                continue
            for stmt in loop.node.body:
                if _store_call(src, stmt) and self._problem(src, loop, stmt) is None:
                    out.append(Candidate(self.id, f'S{stmt.lineno}',
                                         f'sink `{ast.unparse(stmt)}` after the loop over {loop.var} ({loop.site}):'
                                         ' it stores the same value to the same place every iteration'))
        return out

    def _problem(self, src, loop, stmt):
        _, dst, value = _store_call(src, stmt)
        why = _invariance_problem(src, loop, stmt, None, 'store')
        if why:
            return why
        base = subscript_base(dst)
        others = [s for s in loop.node.body if s is not stmt]
        if any(base in names_read(s) for s in others):
            return f'the loop also accesses {base}'
        value_names = names_read(value)
        if value_names & (names_mutated(others) | _tensors_written(src, others)):
            return 'the stored value is modified inside the loop'
        return None

    def apply(self, src, site, params):
        if site.startswith('L'):
            loop = src.loop_at(site)
            for stmt in loop.node.body:
                if _store_call(src, stmt) and self._problem(src, loop, stmt) is None:
                    return self._move(loop, stmt)
            raise RewriteError(f'no loop-invariant nl.store in {loop.describe()}')
        stmt, loop = _loop_of_stmt(src, site)
        if not _store_call(src, stmt):
            raise RewriteError(f'{src.filename}:{stmt.lineno} is not `nl.store(tensor[...], value=...)`')
        why = _affine_loop_problem(loop) or self._problem(src, loop, stmt)
        if why:
            raise RewriteError(f'cannot sink the nl.store at {src.filename}:{stmt.lineno} out of {loop.describe()}:'
                               f' {why}')
        return self._move(loop, stmt)

    def _move(self, loop, stmt):
        before = snippet(loop.node)
        _remove(loop.node.body, stmt)
        loop.body.insert(loop.index + 1, stmt)
        return Applied(f'moved `{ast.unparse(stmt)}` after the loop over {loop.var} ({loop.site}); it now runs '
                       'once', before, snippet([loop.node, stmt]))


# ----------------------------------------------------------------------------------------------------------

def _strip_var_slice(sub, var):
    """For a load/store subscript: (position of the slice that moves with var, W, lower Linear) or a reason."""
    comps = index_components(sub)
    moving = [i for i, c in enumerate(comps) if var in names_read(c)]
    if len(moving) != 1:
        return f'its index uses {var} in {len(moving)} places (need exactly one column slice)'
    pos = moving[0]
    comp = comps[pos]
    if not isinstance(comp, ast.Slice) or comp.lower is None or comp.upper is None or comp.step is not None:
        return f'the component that uses {var} is not a slice `a:b`'
    slices = [i for i, c in enumerate(comps) if isinstance(c, ast.Slice)]
    if len(slices) != 2:
        return 'the tile is not two-dimensional (partition slice + free slice)'
    if pos != slices[1]:
        return f'{var} moves the partition axis, not the free axis'
    lo, hi = linear(comp.lower), linear(comp.upper)
    w = lo.coef(var)
    width = hi.add(lo, -1)
    if w <= 0 or hi.coef(var) != w or not width.is_const() or width.const != w:
        return f'the slice {ast.unparse(comp)} is not [c + {var}*W : c + ({var}+1)*W]'
    return pos, w, lo


class WidenDma(Transformation):
    id = 'widen_dma'
    summary = ('Merge narrow loads at consecutive column offsets (in a loop, or in consecutive statements) into one '
               'wide load; the uses index column slices of the wide tile.')
    params_doc = {'max_bytes_pp': 'largest widened tile, bytes per partition (default 65536)'}

    def candidates(self, src):
        out = []
        for loop in src.loops():
            for stmt in loop.node.body:
                if _load_call(src, stmt) and self._loop_problem(src, loop, stmt, {}) is None:
                    out.append(Candidate(self.id, f'S{stmt.lineno}',
                                         f'widen `{ast.unparse(stmt)}`: one load of all {ast.unparse(loop.trip())} '
                                         f'column blocks before the loop over {loop.var} ({loop.site})'))
        for stmt, body, index, loop in src.statements():
            if _load_call(src, stmt) and isinstance(self._run(src, body, index, {}), list):
                run = self._run(src, body, index, {})
                out.append(Candidate(self.id, f'S{stmt.lineno}',
                                     f'merge the {len(run)} loads at {src.filename}:{stmt.lineno}-'
                                     f'{run[-1].lineno} (consecutive columns of one tensor) into one load'))
        return out

    def _loop_problem(self, src, loop, stmt, params):
        problem = _affine_loop_problem(loop)
        if problem:
            return problem
        trip = loop.trip()
        if trip is None:
            return f'{loop.site} does not start at 0 with step 1'
        target, call, sub = _load_call(src, stmt)
        if any(k.arg == 'mask' for k in call.keywords):
            return 'the load has a mask'
        parsed = _strip_var_slice(sub, loop.var)
        if isinstance(parsed, str):
            return parsed
        pos, w, lo = parsed
        if loop.var in names_read(trip):
            return 'the trip count uses the loop variable'
        rest = copy.deepcopy(stmt)
        comps = index_components(rest.value.args[0] if rest.value.args else sub)
        comps[pos] = ast.Constant(0)
        probe = ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())],
                           value=ast.Call(func=call.func, args=[ast.Subscript(value=sub.value, slice=make_index(comps),
                                                                              ctx=ast.Load())],
                                          keywords=call.keywords), lineno=stmt.lineno)
        loop.node.body[loop.node.body.index(stmt)] = probe
        try:
            why = _invariance_problem(src, loop, probe, target, 'load')
        finally:
            loop.node.body[loop.node.body.index(probe)] = stmt
        if why:
            return why
        n = const_int(trip)
        if n is not None and n < 2:
            return f'the loop over {loop.var} has {n} iteration(s): nothing to merge'
        limit = int(params.get('max_bytes_pp', 65536))
        if n is not None and n * w * 4 > limit:
            return f'the widened tile would need {n * w * 4} bytes per partition (limit {limit})'
        return None

    def _run(self, src, body, index, params):
        """Consecutive loads from index on that read adjacent column blocks of one tensor, or a reason."""
        first = _load_call(src, body[index])
        if not first:
            return 'not a load'
        _, call0, sub0 = first
        comps0 = index_components(sub0)
        slices = [i for i, c in enumerate(comps0) if isinstance(c, ast.Slice)]
        if len(slices) != 2 or any(k.arg == 'mask' for k in call0.keywords):
            return 'not a two-dimensional unmasked load'
        pos = slices[1]
        c0 = comps0[pos]
        if c0.lower is None or c0.upper is None or c0.step is not None:
            return 'the column slice is not `a:b`'
        lo0 = linear(c0.lower)
        width = linear(c0.upper).add(lo0, -1)
        if not width.is_const() or width.const <= 0:
            return 'the column width is not a constant'
        w = width.const
        run = [body[index]]
        targets = {first[0]}
        for stmt in body[index + 1:]:
            found = _load_call(src, stmt)
            if not found or found[0] in targets:
                break
            _, call, sub = found
            comps = index_components(sub)
            if ast.dump(sub.value) != ast.dump(sub0.value) or len(comps) != len(comps0) or \
                    ast.dump(ast.Tuple(elts=[c for i, c in enumerate(comps) if i != pos], ctx=ast.Load())) != \
                    ast.dump(ast.Tuple(elts=[c for i, c in enumerate(comps0) if i != pos], ctx=ast.Load())) or \
                    ast.dump(ast.Tuple(elts=[k.value for k in call.keywords], ctx=ast.Load())) != \
                    ast.dump(ast.Tuple(elts=[k.value for k in call0.keywords], ctx=ast.Load())):
                break
            c = comps[pos]
            if not isinstance(c, ast.Slice) or c.lower is None or c.upper is None:
                break
            off = linear(c.lower).add(lo0, -1)
            wid = linear(c.upper).add(linear(c.lower), -1)
            if not off.is_const() or off.const != len(run) * w or not wid.is_const() or wid.const != w:
                break
            if any(t in names_read(stmt) for t in targets):
                break
            run.append(stmt)
            targets.add(found[0])
        if len(run) < 2:
            return 'no adjacent load of the next column block follows'
        limit = int(params.get('max_bytes_pp', 65536))
        if len(run) * w * 4 > limit:
            return f'the merged tile would need {len(run) * w * 4} bytes per partition (limit {limit})'
        return run

    def apply(self, src, site, params):
        loop = None
        if site.startswith('L'):
            loop = src.loop_at(site)
            reasons = []
            for stmt in loop.node.body:
                if _load_call(src, stmt):
                    why = self._loop_problem(src, loop, stmt, params)
                    if why is None:
                        return self._widen_loop(src, loop, stmt)
                    reasons.append(f'{_load_call(src, stmt)[0]}: {why}')
            raise RewriteError(f'no load to widen in {loop.describe()}'
                               + (f" ({'; '.join(reasons)})" if reasons else ' (no nl.load directly in its body)'))
        stmt, body, index, loop = src.statement_at(site)
        if not _load_call(src, stmt):
            raise RewriteError(f'{src.filename}:{stmt.lineno} is not `name = nl.load(tensor[...])`')
        loop_why = None
        if loop is not None and body is loop.node.body:
            loop_why = self._loop_problem(src, loop, stmt, params)
            if loop_why is None:
                return self._widen_loop(src, loop, stmt)
        run = self._run(src, body, index, params)
        if isinstance(run, list):
            return self._merge_run(src, body, run)
        reason = f'in the loop: {loop_why}; as straight-line loads: {run}' if loop_why else run
        raise RewriteError(f'cannot widen the load at {src.filename}:{stmt.lineno}: {reason}')

    def _widen_loop(self, src, loop, stmt):
        target, call, sub = _load_call(src, stmt)
        pos, w, lo = _strip_var_slice(sub, loop.var)
        trip = loop.trip()
        base = lo.without(loop.var)
        n = const_int(trip)
        lower = base.to_ast()
        if n is not None:
            upper = base.add(linear(ast.Constant(n * w))).to_ast()
        else:
            upper = ast.BinOp(left=base.to_ast(), op=ast.Add(),
                              right=ast.BinOp(left=copy.deepcopy(trip), op=ast.Mult(), right=ast.Constant(w)))
        wide_name = fresh_name(src, target + '_wide')
        comps = [copy.deepcopy(c) for c in index_components(sub)]
        comps[pos] = slice_node(lower, upper)
        wide_call = copy.deepcopy(call)
        wide_call.args = [ast.Subscript(value=copy.deepcopy(sub.value), slice=make_index(comps), ctx=ast.Load())] + \
            wide_call.args[1:]
        wide = ast.Assign(targets=[ast.Name(id=wide_name, ctx=ast.Store())], value=wide_call, lineno=stmt.lineno)
        var = ast.Name(id=loop.var, ctx=ast.Load())
        lo_in = ast.BinOp(left=var, op=ast.Mult(), right=ast.Constant(w))
        hi_in = ast.BinOp(left=copy.deepcopy(lo_in), op=ast.Add(), right=ast.Constant(w))
        view = ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())],
                          value=ast.Subscript(value=ast.Name(id=wide_name, ctx=ast.Load()),
                                              slice=ast.Tuple(elts=[full_slice(), slice_node(lo_in, hi_in)],
                                                              ctx=ast.Load()), ctx=ast.Load()),
                          lineno=stmt.lineno)
        before = snippet(loop.node)
        loop.node.body[loop.node.body.index(stmt)] = view
        loop.body.insert(loop.index, wide)
        width = f'{n * w}' if n is not None else f'{ast.unparse(trip)}*{w}'
        return Applied(f'widened the load of {target} ({ast.unparse(sub.value)}, {w} columns per iteration of '
                       f'{loop.var}) into one {width}-column load `{wide_name}` before the loop ({loop.site}); '
                       f'{target} is now a column slice of it', before, snippet([wide, loop.node]))

    def _merge_run(self, src, body, run):
        target0, call0, sub0 = _load_call(src, run[0])
        comps = [copy.deepcopy(c) for c in index_components(sub0)]
        pos = [i for i, c in enumerate(comps) if isinstance(c, ast.Slice)][1]
        lo = linear(comps[pos].lower)
        w = linear(comps[pos].upper).add(lo, -1).const
        comps[pos] = slice_node(copy.deepcopy(comps[pos].lower), lo.add(linear(ast.Constant(len(run) * w))).to_ast())
        wide_name = fresh_name(src, target0 + '_wide')
        wide_call = copy.deepcopy(call0)
        wide_call.args = [ast.Subscript(value=copy.deepcopy(sub0.value), slice=make_index(comps), ctx=ast.Load())] + \
            wide_call.args[1:]
        new = [ast.Assign(targets=[ast.Name(id=wide_name, ctx=ast.Store())], value=wide_call, lineno=run[0].lineno)]
        for i, stmt in enumerate(run):
            new.append(ast.Assign(targets=[copy.deepcopy(stmt.targets[0])],
                                  value=ast.Subscript(value=ast.Name(id=wide_name, ctx=ast.Load()),
                                                      slice=ast.Tuple(elts=[full_slice(), slice_node(
                                                          ast.Constant(i * w), ast.Constant((i + 1) * w))],
                                                          ctx=ast.Load()), ctx=ast.Load()), lineno=stmt.lineno))
        start = body.index(run[0])
        before = snippet(run)
        body[start:start + len(run)] = new
        return Applied(f'merged {len(run)} loads of {w} columns of {ast.unparse(sub0.value)} '
                       f'({src.filename}:{run[0].lineno}-{run[-1].lineno}) into one {len(run) * w}-column load '
                       f'`{wide_name}`', before, snippet(new))


# ----------------------------------------------------------------------------------------------------------

def _range_call(loop, count):
    call = copy.deepcopy(loop.node.iter)
    call.args = [count]
    call.keywords = []
    return call


class SplitLoop(Transformation):
    id = 'split_loop'
    summary = 'Split (strip-mine) an affine loop of N iterations into N/F outer times F inner iterations.'
    site_kind = 'L'
    params_doc = {'factor': 'inner trip count F (default 2; must divide N)'}

    def candidates(self, src):
        out = []
        for loop in src.loops():
            if self._problem(loop, 2) is None:
                out.append(Candidate(self.id, loop.site, f'split the loop over {loop.var} ({loop.site}, '
                                     f'{ast.unparse(loop.trip())} iterations) into an outer and an inner loop',
                                     {'factor': 2}))
        return out

    def _problem(self, loop, factor):
        problem = _affine_loop_problem(loop)
        if problem:
            return problem
        if loop.trip() is None:
            return f'{loop.site} does not start at 0 with step 1'
        if factor < 2:
            return f'factor {factor} must be at least 2'
        n = const_int(loop.trip())
        if n is not None and n % factor:
            return f'trip count {n} is not a multiple of {factor}'
        if n is not None and n == factor:
            return f'trip count {n} equals the factor (nothing to split)'
        if loop.var in names_bound(loop.node.body):
            return f'the body rebinds {loop.var}'
        return None

    def apply(self, src, site, params):
        loop = src.loop_at(site)
        try:
            factor = int(params.get('factor', 2))
        except (TypeError, ValueError):
            raise RewriteError(f'factor must be an integer, got {params.get("factor")!r}') from None
        why = self._problem(loop, factor)
        if why:
            raise RewriteError(f'cannot split {loop.describe()}: {why}')
        trip = loop.trip()
        outer_var = fresh_name(src, loop.var + '_o')
        inner_var = fresh_name(src, loop.var + '_i')
        index = ast.BinOp(left=ast.BinOp(left=ast.Name(id=outer_var, ctx=ast.Load()), op=ast.Mult(),
                                         right=ast.Constant(factor)),
                          op=ast.Add(), right=ast.Name(id=inner_var, ctx=ast.Load()))
        body = [substitute(s, {loop.var: index}) for s in loop.node.body]
        n = const_int(trip)
        count = ast.Constant(n // factor) if n is not None else \
            ast.BinOp(left=copy.deepcopy(trip), op=ast.FloorDiv(), right=ast.Constant(factor))
        inner = ast.For(target=ast.Name(id=inner_var, ctx=ast.Store()),
                        iter=_range_call(loop, ast.Constant(factor)), body=body, orelse=[], lineno=loop.node.lineno)
        outer = ast.For(target=ast.Name(id=outer_var, ctx=ast.Store()), iter=_range_call(loop, count),
                        body=[inner], orelse=[], lineno=loop.node.lineno)
        before = snippet(loop.node)
        new = [outer]
        if n is None:
            check = ast.parse(f'assert ({ast.unparse(trip)}) % {factor} == 0').body[0]
            new = [check, outer]
        loop.body[loop.index:loop.index + 1] = new
        return Applied(f'split the loop over {loop.var} ({loop.site}) into {outer_var} ({ast.unparse(count)} '
                       f'iterations) x {inner_var} ({factor}); {loop.var} = {outer_var}*{factor} + {inner_var}',
                       before, snippet(new))


class InterchangeLoops(Transformation):
    id = 'interchange_loops'
    summary = 'Swap two perfectly nested affine loops (both nl.affine_range: iterations are independent).'
    site_kind = 'L'

    def candidates(self, src):
        out = []
        for loop in src.loops():
            if self._problem(src, loop) is None:
                inner = loop.node.body[0]
                out.append(Candidate(self.id, loop.site, f'interchange the loops over {loop.var} and '
                                     f'{inner.target.id} ({loop.site})'))
        return out

    def _problem(self, src, loop):
        body = [s for s in loop.node.body if not isinstance(s, ast.Pass)]
        if len(body) != 1 or not isinstance(body[0], ast.For):
            return (f'{loop.site} is not perfectly nested: its body has {len(body)} statements besides an inner loop'
                    if any(isinstance(s, ast.For) for s in body) else f'{loop.site} has no inner loop')
        inner = Loop(src, body[0], loop.node.body, 0, loop, loop.depth + 1, loop.path + [0])
        for l in (loop, inner):
            if l.kind not in ('affine_range', 'static_range'):
                return (f'interchange needs independent iterations (nl.affine_range); the loop over {l.var} at '
                        f'{l.site} is {l.kind}')
        if loop.var in names_read(inner.node.iter):
            return f'the inner trip count depends on {loop.var}'
        return None

    def apply(self, src, site, params):
        loop = src.loop_at(site)
        why = self._problem(src, loop)
        if why:
            raise RewriteError(f'cannot interchange at {loop.describe()}: {why}')
        inner = loop.node.body[0]
        before = snippet(loop.node)
        loop.node.target, inner.target = inner.target, loop.node.target
        loop.node.iter, inner.iter = inner.iter, loop.node.iter
        return Applied(f'interchanged the loops over {inner.target.id} and {loop.node.target.id} ({loop.site}): '
                       f'{loop.node.target.id} is now the outer loop', before, snippet(loop.node))


# ----------------------------------------------------------------------------------------------------------

def _accesses(src, stmts):
    """(reads, writes): base name -> list of index nodes (None for a whole-tensor use)."""
    reads, writes = {}, {}

    def add(table, base, index):
        table.setdefault(base, []).append(index)

    write_nodes = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign):
                targets = [node.target]
                if isinstance(node.target, ast.Subscript):
                    add(reads, subscript_base(node.target), node.target.slice)
            for t in targets:
                if isinstance(t, ast.Subscript):
                    add(writes, subscript_base(t), t.slice)
                    write_nodes.add(id(t))
            name = src.call_name(node)
            if name in ('nl.store', 'nisa.dma_copy'):
                dst = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == 'dst'), None)
                if isinstance(dst, ast.Subscript):
                    add(writes, subscript_base(dst), dst.slice)
                    write_nodes.add(id(dst))
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and id(node) not in write_nodes and isinstance(node.ctx, ast.Load):
                if isinstance(node.value, ast.Name):
                    add(reads, node.value.id, node.slice)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                parent_is_subscript = False
                for s in ast.walk(stmt):
                    if isinstance(s, ast.Subscript) and s.value is node:
                        parent_is_subscript = True
                        break
                if not parent_is_subscript:
                    add(reads, node.id, None)
    return reads, writes


def _index_text(index):
    if isinstance(index, ast.Tuple):
        return ', '.join(ast.unparse(e) for e in index.elts)
    return ast.unparse(index)


def _disjoint(a, b):
    """True when two index expressions certainly address different elements (different constant components)."""
    ea = a.elts if isinstance(a, ast.Tuple) else [a]
    eb = b.elts if isinstance(b, ast.Tuple) else [b]
    if len(ea) != len(eb):
        return False
    for x, y in zip(ea, eb):
        cx, cy = const_int(x), const_int(y)
        if cx is not None and cy is not None and cx != cy:
            return True
    return False


class FuseLoops(Transformation):
    id = 'fuse_loops'
    summary = ('Fuse a loop with the next sibling loop over the same range (legal when no iteration of the second '
               'reads or overwrites what another iteration of the first writes).')
    site_kind = 'L'

    def candidates(self, src):
        out = []
        for loop in src.loops():
            nxt = self._next(loop)
            if nxt is not None and self._problem(src, loop, nxt) is None:
                out.append(Candidate(self.id, loop.site, f'fuse the loop over {loop.var} ({loop.site}) with the '
                                     f'following loop over {nxt.target.id} (L{nxt.lineno})'))
        return out

    def _next(self, loop):
        if loop.index + 1 < len(loop.body) and isinstance(loop.body[loop.index + 1], ast.For):
            return loop.body[loop.index + 1]
        return None

    def _problem(self, src, loop, nxt):
        problem = _affine_loop_problem(loop)
        if problem:
            return problem
        if ast.dump(loop.node.iter) != ast.dump(nxt.iter):
            return (f'L{nxt.lineno} iterates over `{ast.unparse(nxt.iter)}`, not `{ast.unparse(loop.node.iter)}`')
        if not isinstance(nxt.target, ast.Name):
            return f'L{nxt.lineno} target is not a single name'
        var = loop.var
        second = [rename(s, nxt.target.id, var) for s in nxt.body] if nxt.target.id != var else nxt.body
        if nxt.target.id != var and var in (names_read(ast.Module(body=nxt.body, type_ignores=[])) |
                                            names_bound(nxt.body)):
            return f'L{nxt.lineno} already uses the name {var}'
        r1, w1 = _accesses(src, loop.node.body)
        r2, w2 = _accesses(src, second)
        carried = (names_read(ast.Module(body=second, type_ignores=[])) & names_bound(loop.node.body)) - \
            names_bound(second) - {var}
        carried -= set(w1)
        if carried:
            return (f'L{nxt.lineno} uses {", ".join(sorted(carried))}, assigned in {loop.site} (it would see the '
                    'current iteration\'s value instead of the last one)')
        for first_table, second_table, kind in ((w1, r2, 'reads'), (w1, w2, 'overwrites'), (r1, w2, 'writes')):
            for base in set(first_table) & set(second_table):
                for a in first_table[base]:
                    for b in second_table[base]:
                        if a is None or b is None:
                            return (f'L{nxt.lineno} {kind} {base} as a whole, which {loop.site} '
                                    f'{"writes" if kind != "writes" else "reads"}')
                        if _disjoint(a, b):
                            continue
                        if ast.dump(a) == ast.dump(b) and var in names_read(a):
                            continue
                        return (f'L{nxt.lineno} {kind} {base}[{_index_text(b)}] while {loop.site} '
                                f'{"writes" if kind != "writes" else "reads"} {base}[{_index_text(a)}]: a different '
                                f'iteration of {var} may touch the same elements')
        return None

    def apply(self, src, site, params):
        loop = src.loop_at(site)
        nxt = self._next(loop)
        if nxt is None:
            raise RewriteError(f'{loop.describe()} is not directly followed by another loop')
        why = self._problem(src, loop, nxt)
        if why:
            raise RewriteError(f'cannot fuse {loop.site} with L{nxt.lineno}: {why}')
        before = snippet([loop.node, nxt])
        second = [rename(s, nxt.target.id, loop.var) for s in nxt.body]
        loop.node.body.extend(second)
        del loop.body[loop.index + 1]
        return Applied(f'fused the loop at L{nxt.lineno} into the loop over {loop.var} ({loop.site})', before,
                       snippet(loop.node))


# ----------------------------------------------------------------------------------------------------------

ENGINES = {'vector': 'vector_engine', 'scalar': 'scalar_engine', 'gpsimd': 'gpsimd_engine'}
BINARY = ('add', 'subtract', 'multiply', 'maximum', 'minimum')
ENGINE_OPS = ('nisa.tensor_tensor', 'nisa.tensor_scalar', 'nisa.tensor_copy', 'nisa.scalar_tensor_tensor',
              'nisa.memset')


class _Kinds:
    """Which names of the kernel are tiles, which are PSUM tiles, which are scalars (best effort)."""

    def __init__(self, src):
        self.src = src
        self.tiles = set()
        self.psum = set()
        params = [a.arg for a in src.func.args.args]
        subscripted = {subscript_base(n) for n in ast.walk(src.func) if isinstance(n, ast.Subscript)}
        self.tiles |= {p for p in params if p in subscripted}
        self.scalars = {p for p in params if p not in subscripted}
        for node in ast.walk(src.func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                value = node.value
                call = src.call_name(value)
                if call and (call.startswith('nl.') or call.startswith('nisa.')):
                    self.tiles.add(name)
                    if call in ('nisa.nc_matmul', 'nisa.nc_transpose', 'nl.matmul') or \
                            any(k.arg == 'buffer' and ast.unparse(k.value).endswith('psum') for k in value.keywords):
                        self.psum.add(name)
                elif isinstance(value, ast.Subscript) and subscript_base(value) in self.tiles:
                    self.tiles.add(name)
                    if subscript_base(value) in self.psum:
                        self.psum.add(name)
                elif not (names_read(value) & self.tiles) and not isinstance(value, ast.Call):
                    self.scalars.add(name)

    def kind(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return 'scalar'
        base = subscript_base(node) if isinstance(node, (ast.Subscript, ast.Name)) else None
        if base in self.tiles:
            return 'psum' if base in self.psum else 'tile'
        if isinstance(node, ast.Call) and self.src.call_name(node) and \
                self.src.call_name(node).split('.')[0] in ('nl', 'nisa'):
            name = self.src.call_name(node)
            return 'psum' if name in ('nisa.nc_matmul', 'nisa.nc_transpose', 'nl.matmul') else 'tile'
        used = names_read(node)
        if used and used <= self.scalars or not used and isinstance(node, (ast.BinOp, ast.UnaryOp)):
            return 'scalar'
        return None


class MoveElementwiseEngine(Transformation):
    id = 'move_elementwise_engine'
    summary = ('Run an element-wise instruction on another engine: nl.add/subtract/multiply/maximum/minimum and '
               'nl.copy become nisa.tensor_tensor / tensor_scalar / tensor_copy with engine=, or an existing '
               'engine= hint changes.')
    params_doc = {'engine': 'vector | scalar | gpsimd (default: gpsimd for tensor-tensor work, scalar for '
                            'tensor-scalar work and copies)',
                  'call': 'which eligible call of the statement, in source order (default 0)'}

    def _calls(self, src, stmt):
        out = []
        for node in ast.walk(stmt):
            name = src.call_name(node)
            if name in ENGINE_OPS or name == 'nl.copy' or (name and name.startswith('nl.') and name[3:] in BINARY):
                out.append(node)
        return sorted(out, key=lambda n: (n.lineno, n.col_offset))

    def _plan(self, src, kinds, call, engine):
        """(form, new call node, current engine) or a reason string."""
        name = src.call_name(call)
        nl_alias = src.nl_alias()
        if name.startswith('nl.') and name[3:] in BINARY:
            if len(call.args) < 2:
                return f'{name} without two positional operands'
            x, y = call.args[0], call.args[1]
            kx, ky = kinds.kind(x), kinds.kind(y)
            op = ast.Attribute(value=ast.Name(id=nl_alias, ctx=ast.Load()), attr=name[3:], ctx=ast.Load())
            extra = [k for k in call.keywords if k.arg in ('dtype', 'mask')]
            if kx in ('tile', 'psum') and ky in ('tile', 'psum'):
                engine = engine or 'gpsimd'
                if engine == 'scalar':
                    return 'the scalar engine (ACT) has no tensor-tensor instruction'
                if engine == 'vector' and 'psum' not in (kx, ky):
                    pass
                if engine == 'gpsimd' and 'psum' in (kx, ky):
                    return 'the GpSimd engine cannot access PSUM (an operand is a PSUM tile)'
                if kx == 'psum' and ky == 'psum':
                    return 'both operands are PSUM tiles'
                new = ast.Call(func=self._nisa(src, 'tensor_tensor'), args=[x, y],
                               keywords=[ast.keyword(arg='op', value=op)] + extra + [self._eng(src, engine)])
                return 'tensor_tensor', new, 'auto', engine
            if kx in ('tile', 'psum') and ky == 'scalar' or kx == 'scalar' and ky in ('tile', 'psum'):
                tile_kind = kx if ky == 'scalar' else ky
                engine = engine or 'scalar'
                if engine == 'gpsimd' and tile_kind == 'psum':
                    return 'the GpSimd engine cannot access PSUM'
                data, scalar = (x, y) if ky == 'scalar' else (y, x)
                keywords = [ast.keyword(arg='op0', value=op), ast.keyword(arg='operand0', value=scalar)]
                if kx == 'scalar':
                    keywords.append(ast.keyword(arg='reverse0', value=ast.Constant(True)))
                new = ast.Call(func=self._nisa(src, 'tensor_scalar'), args=[data],
                               keywords=keywords + extra + [self._eng(src, engine)])
                return 'tensor_scalar', new, 'auto', engine
            return (f'cannot tell whether the operands of `{ast.unparse(call)}` are tiles or scalars '
                    f'({ast.unparse(x)}: {kx or "unknown"}, {ast.unparse(y)}: {ky or "unknown"})')
        if name == 'nl.copy':
            engine = engine or 'scalar'
            if engine == 'gpsimd' and call.args and kinds.kind(call.args[0]) == 'psum':
                return 'the GpSimd engine cannot access PSUM'
            new = ast.Call(func=self._nisa(src, 'tensor_copy'), args=list(call.args),
                           keywords=[k for k in call.keywords if k.arg != 'engine'] + [self._eng(src, engine)])
            return 'tensor_copy', new, 'auto', engine
        current = next((ast.unparse(k.value).split('.')[-1] for k in call.keywords if k.arg == 'engine'), 'auto')
        default = 'gpsimd' if name in ('nisa.tensor_tensor', 'nisa.scalar_tensor_tensor', 'nisa.memset') else 'scalar'
        if current == ENGINES.get(default):
            default = 'vector'
        engine = engine or default
        if engine == 'scalar' and name in ('nisa.tensor_tensor', 'nisa.scalar_tensor_tensor'):
            return 'the scalar engine (ACT) has no tensor-tensor instruction'
        if engine == 'gpsimd' and any(kinds.kind(a) == 'psum' for a in call.args):
            return 'the GpSimd engine cannot access PSUM'
        if current == ENGINES[engine]:
            return f'already on the {engine} engine'
        new = copy.deepcopy(call)
        new.keywords = [k for k in new.keywords if k.arg != 'engine'] + [self._eng(src, engine)]
        return name[5:], new, current, engine

    def _nisa(self, src, attr):
        alias = src.ensure_nisa_import()
        return ast.Attribute(value=ast.Name(id=alias, ctx=ast.Load()), attr=attr, ctx=ast.Load())

    def _eng(self, src, engine):
        alias = src.nisa_alias() if src.nisa else 'nisa'
        return ast.keyword(arg='engine', value=ast.Attribute(value=ast.Name(id=alias, ctx=ast.Load()),
                                                             attr=ENGINES[engine], ctx=ast.Load()))

    def candidates(self, src):
        out = []
        kinds = _Kinds(src)
        for stmt, body, index, loop in src.statements():
            if isinstance(stmt, (ast.For, ast.If, ast.While, ast.With)):
                continue
            for i, call in enumerate(self._calls(src, stmt)):
                probe = copy.deepcopy(src)
                plan = self._plan(probe, kinds, call, None)
                if isinstance(plan, tuple):
                    out.append(Candidate(self.id, f'S{stmt.lineno}',
                                         f'run `{ast.unparse(call)}` at line {stmt.lineno} as {plan[0]} on the '
                                         f'{plan[3]} engine', {'engine': plan[3], 'call': i}))
        return out

    def apply(self, src, site, params):
        stmt, body, index, loop = src.statement_at(site)
        engine = params.get('engine')
        if engine is not None and engine not in ENGINES:
            raise RewriteError(f'unknown engine {engine!r} (vector, scalar, gpsimd)')
        calls = self._calls(src, stmt)
        if not calls:
            raise RewriteError(f'no element-wise nl.add/subtract/multiply/maximum/minimum, nl.copy or nisa '
                               f'tensor_tensor/tensor_scalar/tensor_copy call at {src.filename}:{stmt.lineno}')
        try:
            which = int(params.get('call', 0))
        except (TypeError, ValueError):
            raise RewriteError('call must be an integer') from None
        if not 0 <= which < len(calls):
            raise RewriteError(f'call {which} out of range: the statement has {len(calls)} eligible calls')
        call = calls[which]
        kinds = _Kinds(src)
        before = snippet(stmt)
        plan = self._plan(src, kinds, call, engine)
        if isinstance(plan, str):
            raise RewriteError(f'cannot move `{ast.unparse(call)}` ({src.filename}:{stmt.lineno}): {plan}')
        form, new, current, engine = plan

        class Replace(ast.NodeTransformer):
            def visit_Call(self, node):
                if node is call:
                    return ast.copy_location(new, node)
                self.generic_visit(node)
                return node
        Replace().visit(stmt)
        return Applied(f'moved `{ast.unparse(call)}` ({src.filename}:{stmt.lineno}) from the {current} engine '
                       f'choice to the {engine} engine as {form}', before, snippet(stmt))


# ----------------------------------------------------------------------------------------------------------

_EVICTIONS = ('nl.copy', 'nisa.tensor_copy', 'nisa.activation')


class BatchPsumEvictions(Transformation):
    id = 'batch_psum_evictions'
    summary = ('Replace a loop that evicts a PSUM tile in column strips (copy + store per strip) by one eviction '
               'and one store of the whole span.')
    site_kind = 'L'

    def candidates(self, src):
        out = []
        kinds = _Kinds(src)
        for loop in src.loops():
            if isinstance(self._match(src, kinds, loop), tuple):
                out.append(Candidate(self.id, loop.site, f'evict and store the PSUM strips of the loop over '
                                     f'{loop.var} ({loop.site}) in one copy and one store'))
        return out

    def _match(self, src, kinds, loop):
        problem = _affine_loop_problem(loop)
        if problem:
            return problem
        trip = loop.trip()
        if trip is None:
            return f'{loop.site} does not start at 0 with step 1'
        body = [s for s in loop.node.body if not isinstance(s, ast.Pass)]
        if len(body) != 2:
            return f'the loop body has {len(body)} statements (need an eviction then a store)'
        evict, store = body
        if not (isinstance(evict, ast.Assign) and len(evict.targets) == 1 and isinstance(evict.targets[0], ast.Name)
                and src.call_name(evict.value) in _EVICTIONS):
            return 'the first statement is not `t = nl.copy / nisa.tensor_copy / nisa.activation(PSUM strip)`'
        call = evict.value
        data_pos = 1 if src.call_name(call) == 'nisa.activation' else 0
        data = next((k.value for k in call.keywords if k.arg in ('data', 'src')), None)
        if data is None and len(call.args) > data_pos:
            data = call.args[data_pos]
        if not isinstance(data, ast.Subscript) or kinds.kind(data) != 'psum':
            return 'the evicted operand is not a column strip of a PSUM tile'
        other = [a for a in list(call.args) + [k.value for k in call.keywords] if a is not data]
        if any(loop.var in names_read(a) for a in other):
            return f'the eviction arguments other than the PSUM strip depend on {loop.var}'
        parsed = _strip_var_slice(data, loop.var)
        if isinstance(parsed, str):
            return f'PSUM strip: {parsed}'
        found = _store_call(src, store)
        if not found or not (isinstance(found[2], ast.Name) and found[2].id == evict.targets[0].id):
            return 'the second statement is not `nl.store(dst[...], value=t)` of the evicted tile'
        sparsed = _strip_var_slice(found[1], loop.var)
        if isinstance(sparsed, str):
            return f'store: {sparsed}'
        if sparsed[1] != parsed[1]:
            return 'the PSUM strips and the stored strips have different widths'
        n = const_int(trip)
        if n is not None and n * parsed[1] * 4 > 2048:
            return f'the batched eviction would cover {n * parsed[1] * 4} bytes per partition (> one 2 KiB bank)'
        return evict, store, data, parsed, found, sparsed

    def apply(self, src, site, params):
        loop = src.loop_at(site)
        kinds = _Kinds(src)
        m = self._match(src, kinds, loop)
        if isinstance(m, str):
            raise RewriteError(f'no strip-wise PSUM eviction in {loop.describe()}: {m}')
        evict, store, data, (pos, w, lo), (call, dst, value), (spos, sw, slo) = m
        trip = loop.trip()
        n = const_int(trip)

        def span(lin):
            base = lin.without(loop.var)
            if n is not None:
                return slice_node(base.to_ast(), base.add(linear(ast.Constant(n * w))).to_ast())
            return slice_node(base.to_ast(), ast.BinOp(left=base.to_ast(), op=ast.Add(), right=ast.BinOp(
                left=copy.deepcopy(trip), op=ast.Mult(), right=ast.Constant(w))))

        before = snippet(loop.node)
        new_evict = copy.deepcopy(evict)
        for node in ast.walk(new_evict):
            if isinstance(node, ast.Subscript) and ast.dump(node) == ast.dump(data):
                comps = index_components(node)
                comps[pos] = span(lo)
                node.slice = make_index(comps)
        new_store = copy.deepcopy(store)
        for node in ast.walk(new_store):
            if isinstance(node, ast.Subscript) and ast.dump(node) == ast.dump(dst):
                comps = index_components(node)
                comps[spos] = span(slo)
                node.slice = make_index(comps)
        loop.body[loop.index:loop.index + 1] = [new_evict, new_store]
        width = n * w if n is not None else f'{ast.unparse(trip)}*{w}'
        return Applied(f'replaced {ast.unparse(trip)} strip-wise PSUM evictions and stores of {w} columns '
                       f'({loop.site}) by one eviction and one store of {width} columns', before,
                       snippet([new_evict, new_store]))


CATALOGUE = [HoistInvariantLoad(), HoistInvariantStore(), WidenDma(), SplitLoop(), InterchangeLoops(), FuseLoops(),
             MoveElementwiseEngine(), BatchPsumEvictions()]
BY_ID = {t.id: t for t in CATALOGUE}
