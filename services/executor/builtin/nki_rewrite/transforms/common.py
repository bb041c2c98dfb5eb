"""Checks and helpers shared by the transformations: call arguments, load/store shapes, loop invariance."""
import ast
from typing import Iterator, List, Optional, Set, Tuple, Union

from ..index_forms import Linear, index_components, linear
from ..kernel_ast import KernelSource, Loop, RewriteError, names_bound, names_mutated, names_read, subscript_base


def call_arg(call: ast.Call, position: Optional[int], *keywords: str) -> Optional[ast.expr]:
    """The argument passed under one of `keywords`, else the positional argument at `position`, else None."""
    for k in call.keywords:
        if k.arg in keywords:
            return k.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def has_keyword(call: ast.Call, keyword: str) -> bool:
    return any(k.arg == keyword for k in call.keywords)


def load_call(src: KernelSource, stmt: ast.stmt) -> Optional[Tuple[str, ast.Call, ast.Subscript]]:
    """(target name, call, subscript) when stmt is `name = nl.load(tensor[...], ...)`."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        call = stmt.value
        if isinstance(call, ast.Call) and src.call_name(call) == 'nl.load':
            arg = call_arg(call, 0, 'src')
            if isinstance(arg, ast.Subscript):
                return stmt.targets[0].id, call, arg
    return None


def store_call(src: KernelSource, stmt: ast.stmt) -> Optional[Tuple[ast.Call, ast.Subscript, ast.expr]]:
    """(call, destination subscript, value expr) when stmt is `nl.store(tensor[...], value=...)`."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and src.call_name(stmt.value) == 'nl.store':
        call = stmt.value
        dst = call_arg(call, 0, 'dst')
        value = call_arg(call, 1, 'value')
        if isinstance(dst, ast.Subscript) and value is not None:
            return call, dst, value
    return None


STORE_CALLS = ('nl.store', 'nisa.dma_copy')


def store_destination(call: ast.Call) -> Optional[ast.expr]:
    """The destination of an `nl.store` / `nisa.dma_copy` call (first argument or `dst=`)."""
    return call_arg(call, 0, 'dst')


def tensors_written(src: KernelSource, stmts: List[ast.stmt]) -> Set[str]:
    """Base names of tensors written by stores, subscript assignments, dma_copy and reduce_res in stmts."""
    out = set(names_mutated(stmts))
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            name = src.call_name(node)
            if name in STORE_CALLS:
                dst = store_destination(node)
                base = subscript_base(dst) if dst is not None else None
                if base:
                    out.add(base)
            elif name:
                for k in node.keywords:
                    base = subscript_base(k.value) if k.arg == 'reduce_res' else None
                    if base:
                        out.add(base)
    return out


def read_before(name: str, body: List[ast.stmt], index: int) -> bool:
    return any(name in names_read(stmt) for stmt in body[:index])


def count_binds(name: str, stmts: List[ast.stmt]) -> int:
    return sum(1 for stmt in stmts for n in ast.walk(stmt)
               if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name)


def invariance_problem(src: KernelSource, loop: Loop, stmt: ast.stmt, target: Optional[str],
                       what: str) -> Optional[str]:
    """Why stmt (which binds `target`, or None) cannot move out of loop, or None when it can."""
    var = loop.var
    used = names_read(stmt)
    if var in used:
        return f"the {what}'s index uses {var}"
    inner = (names_bound(loop.node.body) - {target}) & used
    if inner:
        return f"the {what} uses {', '.join(sorted(inner))}, assigned inside the loop"
    written = tensors_written(src, [s for s in loop.node.body if s is not stmt])
    bases = {subscript_base(n) for n in ast.walk(stmt) if isinstance(n, ast.Subscript)} - {None}
    clobbered = written & bases
    if clobbered:
        return f"the loop writes {', '.join(sorted(clobbered))}, which the {what} reads"
    if target is not None:
        if count_binds(target, loop.node.body) > 1:
            return f'{target} is assigned more than once in the loop'
        if target in names_mutated(loop.node.body) or target in tensors_written(src, loop.node.body):
            return f'{target} is written inside the loop (hoisting would share one buffer across iterations)'
        if read_before(target, loop.node.body, loop.node.body.index(stmt)):
            return f'{target} is read before the {what} in the loop body'
    return None


def remove_statement(body: List[ast.stmt], stmt: ast.stmt) -> None:
    """Removes stmt from body, leaving `pass` when the body would be empty."""
    body.remove(stmt)
    if not body:
        body.append(ast.Pass())


def loop_of_statement(src: KernelSource, site: str) -> Tuple[ast.stmt, Loop]:
    """The statement at site and the loop whose body directly holds it; RewriteError when there is none."""
    stmt, body, _, loop = src.statement_at(site)
    if loop is None or body is not loop.node.body:
        raise RewriteError(f'{src.filename}:{stmt.lineno} is not directly inside a loop body')
    return stmt, loop


def affine_loop_statements(src: KernelSource) -> Iterator[Tuple[Loop, ast.stmt]]:
    """(loop, statement) for every statement directly in the body of an affine loop of the kernel."""
    for loop in src.loops():
        if affine_loop_problem(loop) is None:
            for stmt in loop.node.body:
                yield loop, stmt


def affine_loop_problem(loop: Loop) -> Optional[str]:
    if loop.var is None:
        return f'{loop.site}: the loop target is not a single name'
    if not loop.affine:
        return f'{loop.site}: not an affine loop (nl.affine_range / sequential_range / static_range / range)'
    return None


def counted_loop(loop: Loop) -> Union[str, Tuple[str, ast.expr]]:
    """(variable, trip count) of an affine loop over range(N) from 0 with step 1, or why the loop is not one."""
    problem = affine_loop_problem(loop)
    if problem:
        return problem
    trip = loop.trip()
    if trip is None:
        return f'{loop.site} does not start at 0 with step 1'
    assert loop.var is not None  # checked by affine_loop_problem
    return loop.var, trip


def strip_var_slice(sub: ast.Subscript, var: str) -> Union[str, Tuple[int, int, Linear]]:
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
