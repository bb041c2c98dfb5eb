"""widen_dma: merge narrow loads at consecutive column offsets into one wide load.

Two forms. In a loop `for j in range(J)`, a load of columns `[c + j*W : c + (j+1)*W]` becomes one `J*W`-column
load before the loop and a column view of it inside. In straight-line code, n consecutive loads of adjacent
W-column blocks of one tensor become one load and n column views.
"""
import ast
import copy
from typing import List, NamedTuple, Optional, Set, Union

from ..const_eval import const_int
from ..index_forms import Linear, full_slice, index_components, linear, make_index, slice_node
from ..kernel_ast import KernelSource, Loop, RewriteError, fresh_name, names_read, snippet
from .base import Applied, Candidate, Params, Transformation
from .common import counted_loop, has_keyword, invariance_problem, load_call, strip_var_slice

DEFAULT_MAX_BYTES_PP = 65536
BYTES_PER_ELEMENT = 4


class WidenDma(Transformation):
    id = 'widen_dma'
    summary = ('Merge narrow loads at consecutive column offsets (in a loop, or in consecutive statements) into one '
               'wide load; the uses index column slices of the wide tile.')
    params_doc = {'max_bytes_pp': 'largest widened tile, bytes per partition (default 65536)'}

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        for loop in src.loops():
            for stmt in loop.node.body:
                if load_call(src, stmt) and loop_problem(src, loop, stmt, {}) is None:
                    out.append(Candidate(self.id, f'S{stmt.lineno}',
                                         f'widen `{ast.unparse(stmt)}`: one load of all {loop.trip_text()} '
                                         f'column blocks before the loop over {loop.var} ({loop.site})'))
        for stmt, body, index, _ in src.statements():
            if not load_call(src, stmt):
                continue
            run = adjacent_loads(src, body, index, {})
            if isinstance(run, list):
                out.append(Candidate(self.id, f'S{stmt.lineno}',
                                     f'merge the {len(run)} loads at {src.filename}:{stmt.lineno}-'
                                     f'{run[-1].lineno} (consecutive columns of one tensor) into one load'))
        return out

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        if site.startswith('L'):
            return _widen_in_loop_site(src, src.loop_at(site), params)
        stmt, body, index, loop = src.statement_at(site)
        if not load_call(src, stmt):
            raise RewriteError(f'{src.filename}:{stmt.lineno} is not `name = nl.load(tensor[...])`')
        loop_why = None
        if loop is not None and body is loop.node.body:
            loop_why = loop_problem(src, loop, stmt, params)
            if loop_why is None:
                return widen_loop(src, loop, stmt)
        run = adjacent_loads(src, body, index, params)
        if isinstance(run, list):
            return merge_run(src, body, run)
        reason = f'in the loop: {loop_why}; as straight-line loads: {run}' if loop_why else run
        raise RewriteError(f'cannot widen the load at {src.filename}:{stmt.lineno}: {reason}')


def _widen_in_loop_site(src: KernelSource, loop: Loop, params: Params) -> Applied:
    """Widens the first load of the loop's body that can be widened."""
    reasons = []
    for stmt in loop.node.body:
        found = load_call(src, stmt)
        if found:
            why = loop_problem(src, loop, stmt, params)
            if why is None:
                return widen_loop(src, loop, stmt)
            reasons.append(f'{found[0]}: {why}')
    raise RewriteError(f'no load to widen in {loop.describe()}'
                       + (f" ({'; '.join(reasons)})" if reasons else ' (no nl.load directly in its body)'))


def _max_bytes(params: Params) -> int:
    return int(params.get('max_bytes_pp', DEFAULT_MAX_BYTES_PP))


# ----- loop form -----
def loop_problem(src: KernelSource, loop: Loop, stmt: ast.stmt, params: Params) -> Optional[str]:
    """Why the load stmt in loop cannot become one wide load before the loop, or None."""
    counted = counted_loop(loop)
    if isinstance(counted, str):
        return counted
    var, trip = counted
    found = load_call(src, stmt)
    assert found is not None
    target, call, sub = found
    if has_keyword(call, 'mask'):
        return 'the load has a mask'
    parsed = strip_var_slice(sub, var)
    if isinstance(parsed, str):
        return parsed
    pos, w, _ = parsed
    if var in names_read(trip):
        return 'the trip count uses the loop variable'
    why = _invariant_apart_from_columns(src, loop, stmt, pos)
    if why:
        return why
    n = const_int(trip)
    if n is not None and n < 2:
        return f'the loop over {var} has {n} iteration(s): nothing to merge'
    limit = _max_bytes(params)
    if n is not None and n * w * BYTES_PER_ELEMENT > limit:
        return f'the widened tile would need {n * w * BYTES_PER_ELEMENT} bytes per partition (limit {limit})'
    return None


def _invariant_apart_from_columns(src: KernelSource, loop: Loop, stmt: ast.stmt, pos: int) -> Optional[str]:
    """Why the load could not be hoisted even if its column slice (component pos) did not move, or None."""
    found = load_call(src, stmt)
    assert found is not None
    target, call, sub = found
    comps = [copy.deepcopy(c) for c in index_components(sub)]
    comps[pos] = ast.Constant(0)
    probe = ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())],
                       value=ast.Call(func=call.func, args=[ast.Subscript(value=sub.value, slice=make_index(comps),
                                                                          ctx=ast.Load())],
                                      keywords=call.keywords), lineno=stmt.lineno)
    body = loop.node.body
    body[body.index(stmt)] = probe
    try:
        return invariance_problem(src, loop, probe, target, 'load')
    finally:
        body[body.index(probe)] = stmt


def widen_loop(src: KernelSource, loop: Loop, stmt: ast.stmt) -> Applied:
    """Replaces the load stmt by one wide load before the loop and a column view of it inside."""
    found = load_call(src, stmt)
    assert found is not None and loop.var is not None
    target, call, sub = found
    parsed = strip_var_slice(sub, loop.var)
    assert not isinstance(parsed, str)
    pos, w, lo = parsed
    trip = loop.trip()
    assert trip is not None
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
    wide = _wide_load(wide_name, call, sub, comps, stmt.lineno)
    column = ast.BinOp(left=ast.Name(id=loop.var, ctx=ast.Load()), op=ast.Mult(), right=ast.Constant(w))
    view = _column_view(ast.Name(id=target, ctx=ast.Store()), wide_name, column,
                        ast.BinOp(left=copy.deepcopy(column), op=ast.Add(), right=ast.Constant(w)), stmt.lineno)
    before = snippet(loop.node)
    loop.node.body[loop.node.body.index(stmt)] = view
    loop.body.insert(loop.index, wide)
    width = f'{n * w}' if n is not None else f'{ast.unparse(trip)}*{w}'
    return Applied(f'widened the load of {target} ({ast.unparse(sub.value)}, {w} columns per iteration of '
                   f'{loop.var}) into one {width}-column load `{wide_name}` before the loop ({loop.site}); '
                   f'{target} is now a column slice of it', before, snippet([wide, loop.node]))


# ----- straight-line form -----
class _Block(NamedTuple):
    """A 2-D unmasked load `t = nl.load(T[p, a:b])` with a constant column width b - a."""
    target: str
    call: ast.Call
    sub: ast.Subscript
    pos: int          # index component of the column slice
    lower: Linear     # its lower bound
    width: int


def _column_block(src: KernelSource, stmt: ast.stmt) -> Union[str, _Block]:
    found = load_call(src, stmt)
    if not found:
        return 'not a load'
    target, call, sub = found
    comps = index_components(sub)
    slices = [i for i, c in enumerate(comps) if isinstance(c, ast.Slice)]
    if len(slices) != 2 or has_keyword(call, 'mask'):
        return 'not a two-dimensional unmasked load'
    pos = slices[1]
    column = comps[pos]
    assert isinstance(column, ast.Slice)
    if column.lower is None or column.upper is None or column.step is not None:
        return 'the column slice is not `a:b`'
    lower = linear(column.lower)
    width = linear(column.upper).add(lower, -1)
    if not width.is_const() or width.const <= 0:
        return 'the column width is not a constant'
    return _Block(target, call, sub, pos, lower, width.const)


def _same_apart_from_columns(first: _Block, call: ast.Call, sub: ast.Subscript) -> bool:
    """Same tensor, same other index components and same keyword values as the first block."""
    comps0, comps = index_components(first.sub), index_components(sub)

    def others(components: List[ast.expr]) -> str:
        return ast.dump(ast.Tuple(elts=[c for i, c in enumerate(components) if i != first.pos], ctx=ast.Load()))

    def keyword_values(c: ast.Call) -> str:
        return ast.dump(ast.Tuple(elts=[k.value for k in c.keywords], ctx=ast.Load()))

    return (ast.dump(sub.value) == ast.dump(first.sub.value) and len(comps) == len(comps0)
            and others(comps) == others(comps0) and keyword_values(call) == keyword_values(first.call))


def _is_next_block(src: KernelSource, stmt: ast.stmt, first: _Block, count: int, targets: Set[str]) -> bool:
    """Whether stmt loads the block right after the `count` blocks of the run so far, into a new name."""
    found = load_call(src, stmt)
    if not found or found[0] in targets:
        return False
    _, call, sub = found
    if not _same_apart_from_columns(first, call, sub):
        return False
    column = index_components(sub)[first.pos]
    if not isinstance(column, ast.Slice) or column.lower is None or column.upper is None:
        return False
    offset = linear(column.lower).add(first.lower, -1)
    width = linear(column.upper).add(linear(column.lower), -1)
    if not offset.is_const() or offset.const != count * first.width or not width.is_const() or \
            width.const != first.width:
        return False
    return not any(t in names_read(stmt) for t in targets)


def adjacent_loads(src: KernelSource, body: List[ast.stmt], index: int,
                   params: Params) -> Union[str, List[ast.stmt]]:
    """Consecutive loads from index on that read adjacent column blocks of one tensor, or a reason."""
    first = _column_block(src, body[index])
    if isinstance(first, str):
        return first
    run = [body[index]]
    targets = {first.target}
    for stmt in body[index + 1:]:
        if not _is_next_block(src, stmt, first, len(run), targets):
            break
        run.append(stmt)
        found = load_call(src, stmt)
        assert found is not None
        targets.add(found[0])
    if len(run) < 2:
        return 'no adjacent load of the next column block follows'
    limit = _max_bytes(params)
    if len(run) * first.width * BYTES_PER_ELEMENT > limit:
        return (f'the merged tile would need {len(run) * first.width * BYTES_PER_ELEMENT} bytes per partition '
                f'(limit {limit})')
    return run


def merge_run(src: KernelSource, body: List[ast.stmt], run: List[ast.stmt]) -> Applied:
    """Replaces the run of adjacent loads by one wide load and one column view per original load."""
    first = _column_block(src, run[0])
    assert not isinstance(first, str)
    w = first.width
    comps = [copy.deepcopy(c) for c in index_components(first.sub)]
    column = comps[first.pos]
    assert isinstance(column, ast.Slice)
    comps[first.pos] = slice_node(copy.deepcopy(column.lower),
                                  first.lower.add(linear(ast.Constant(len(run) * w))).to_ast())
    wide_name = fresh_name(src, first.target + '_wide')
    new: List[ast.stmt] = [_wide_load(wide_name, first.call, first.sub, comps, run[0].lineno)]
    for i, stmt in enumerate(run):
        assert isinstance(stmt, ast.Assign)
        new.append(_column_view(copy.deepcopy(stmt.targets[0]), wide_name, ast.Constant(i * w),
                                ast.Constant((i + 1) * w), stmt.lineno))
    start = body.index(run[0])
    before = snippet(run)
    body[start:start + len(run)] = new
    return Applied(f'merged {len(run)} loads of {w} columns of {ast.unparse(first.sub.value)} '
                   f'({src.filename}:{run[0].lineno}-{run[-1].lineno}) into one {len(run) * w}-column load '
                   f'`{wide_name}`', before, snippet(new))


# ----- the new statements -----
def _wide_load(wide_name: str, call: ast.Call, sub: ast.Subscript, comps: List[ast.expr], lineno: int) -> ast.Assign:
    """`wide_name = <call>(<tensor>[comps], <call's other arguments>)`."""
    wide_call = copy.deepcopy(call)
    wide_call.args = [ast.Subscript(value=copy.deepcopy(sub.value), slice=make_index(comps), ctx=ast.Load())] + \
        wide_call.args[1:]
    return ast.Assign(targets=[ast.Name(id=wide_name, ctx=ast.Store())], value=wide_call, lineno=lineno)


def _column_view(target: ast.expr, wide_name: str, lower: ast.expr, upper: ast.expr, lineno: int) -> ast.Assign:
    """`target = wide_name[:, lower:upper]`."""
    return ast.Assign(targets=[target],
                      value=ast.Subscript(value=ast.Name(id=wide_name, ctx=ast.Load()),
                                          slice=ast.Tuple(elts=[full_slice(), slice_node(lower, upper)],
                                                          ctx=ast.Load()), ctx=ast.Load()),
                      lineno=lineno)
