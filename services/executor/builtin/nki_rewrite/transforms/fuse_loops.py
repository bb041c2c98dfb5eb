"""fuse_loops: append the body of the next sibling loop over the same range to this loop."""
import ast
from typing import Dict, List, Optional, Set, Tuple

from ..const_eval import const_int
from ..kernel_ast import KernelSource, Loop, RewriteError, names_bound, names_read, rename, snippet, subscript_base
from .base import Applied, Candidate, Params, Transformation
from .common import STORE_CALLS, affine_loop_problem, store_destination

# base name -> index nodes of its accesses (None for a use of the whole tensor)
AccessTable = Dict[Optional[str], List[Optional[ast.expr]]]


def _accesses(src: KernelSource, stmts: List[ast.stmt]) -> Tuple[AccessTable, AccessTable]:
    """(reads, writes) of the tensors in stmts."""
    reads: AccessTable = {}
    writes: AccessTable = {}

    def add(table: AccessTable, base: Optional[str], index: Optional[ast.expr]) -> None:
        table.setdefault(base, []).append(index)

    write_nodes: Set[int] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            targets: List[ast.expr] = []
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
            if isinstance(node, ast.Call) and src.call_name(node) in STORE_CALLS:
                dst = store_destination(node)
                if isinstance(dst, ast.Subscript):
                    add(writes, subscript_base(dst), dst.slice)
                    write_nodes.add(id(dst))
    for stmt in stmts:
        subscripted = {id(s.value) for s in ast.walk(stmt) if isinstance(s, ast.Subscript)}
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and id(node) not in write_nodes and isinstance(node.ctx, ast.Load):
                if isinstance(node.value, ast.Name):
                    add(reads, node.value.id, node.slice)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in subscripted:
                add(reads, node.id, None)
    return reads, writes


def _index_text(index: ast.expr) -> str:
    if isinstance(index, ast.Tuple):
        return ', '.join(ast.unparse(e) for e in index.elts)
    return ast.unparse(index)


def _disjoint(a: ast.expr, b: ast.expr) -> bool:
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


def _conflict(first: AccessTable, second: AccessTable, kind: str, loop: Loop, nxt: ast.For) -> Optional[str]:
    """The first pair of accesses to one tensor that fusion could reorder, described, or None."""
    var = loop.var
    first_kind = 'writes' if kind != 'writes' else 'reads'
    for base in set(first) & set(second):
        for a in first[base]:
            for b in second[base]:
                if a is None or b is None:
                    return f'L{nxt.lineno} {kind} {base} as a whole, which {loop.site} {first_kind}'
                if _disjoint(a, b):
                    continue
                if ast.dump(a) == ast.dump(b) and var in names_read(a):
                    continue
                return (f'L{nxt.lineno} {kind} {base}[{_index_text(b)}] while {loop.site} {first_kind} '
                        f'{base}[{_index_text(a)}]: a different iteration of {var} may touch the same elements')
    return None


class FuseLoops(Transformation):
    id = 'fuse_loops'
    summary = ('Fuse a loop with the next sibling loop over the same range (legal when no iteration of the second '
               'reads or overwrites what another iteration of the first writes).')
    site_kind = 'L'

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        for loop in src.loops():
            nxt = self._next(loop)
            if nxt is not None and self._problem(src, loop, nxt) is None:
                out.append(Candidate(self.id, loop.site, f'fuse the loop over {loop.var} ({loop.site}) with the '
                                     f'following loop over {ast.unparse(nxt.target)} (L{nxt.lineno})'))
        return out

    def _next(self, loop: Loop) -> Optional[ast.For]:
        if loop.index + 1 < len(loop.body):
            following = loop.body[loop.index + 1]
            if isinstance(following, ast.For):
                return following
        return None

    def _problem(self, src: KernelSource, loop: Loop, nxt: ast.For) -> Optional[str]:
        problem = affine_loop_problem(loop)
        if problem:
            return problem
        if ast.dump(loop.node.iter) != ast.dump(nxt.iter):
            return (f'L{nxt.lineno} iterates over `{ast.unparse(nxt.iter)}`, not `{ast.unparse(loop.node.iter)}`')
        if not isinstance(nxt.target, ast.Name):
            return f'L{nxt.lineno} target is not a single name'
        var = loop.var
        assert var is not None
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
            conflict = _conflict(first_table, second_table, kind, loop, nxt)
            if conflict:
                return conflict
        return None

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        loop = src.loop_at(site)
        nxt = self._next(loop)
        if nxt is None:
            raise RewriteError(f'{loop.describe()} is not directly followed by another loop')
        why = self._problem(src, loop, nxt)
        if why:
            raise RewriteError(f'cannot fuse {loop.site} with L{nxt.lineno}: {why}')
        assert isinstance(nxt.target, ast.Name) and loop.var is not None
        before = snippet([loop.node, nxt])
        second = [rename(s, nxt.target.id, loop.var) for s in nxt.body]
        loop.node.body.extend(second)
        del loop.body[loop.index + 1]
        return Applied(f'fused the loop at L{nxt.lineno} into the loop over {loop.var} ({loop.site})', before,
                       snippet(loop.node))
