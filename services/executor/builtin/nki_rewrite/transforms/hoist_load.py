"""hoist_invariant_load: move an nl.load whose index does not depend on the loop out of the loop."""
import ast
from typing import List

from ..kernel_ast import KernelSource, Loop, RewriteError, snippet
from .base import Applied, Candidate, Params, Transformation
from .common import (affine_loop_problem, affine_loop_statements, invariance_problem, load_call, loop_of_statement,
                     remove_statement)


class HoistInvariantLoad(Transformation):
    id = 'hoist_invariant_load'
    summary = 'Move an nl.load whose index does not depend on the loop out of the loop (loaded once).'

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        for loop, stmt in affine_loop_statements(src):
            found = load_call(src, stmt)
            if found and invariance_problem(src, loop, stmt, found[0], 'load') is None:
                out.append(Candidate(self.id, f'S{stmt.lineno}',
                                     f'hoist `{ast.unparse(stmt)}` out of the loop over {loop.var} '
                                     f'({loop.site}): its index does not depend on {loop.var}'))
        return out

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        if site.startswith('L'):
            return self._apply_to_loop(src, src.loop_at(site))
        stmt, loop = loop_of_statement(src, site)
        found = load_call(src, stmt)
        if not found:
            raise RewriteError(f'{src.filename}:{stmt.lineno} is not `name = nl.load(tensor[...])`')
        problem = affine_loop_problem(loop)
        why = problem or invariance_problem(src, loop, stmt, found[0], 'load')
        if why:
            raise RewriteError(f'cannot hoist the nl.load of {found[0]} at {src.filename}:{stmt.lineno} out of '
                               f'{loop.describe()}: {why}')
        return self._move(loop, stmt)

    def _apply_to_loop(self, src: KernelSource, loop: Loop) -> Applied:
        """Hoists the first loop-invariant load directly in the loop's body."""
        problem = affine_loop_problem(loop)
        if problem:
            raise RewriteError(problem)
        reasons = []
        for stmt in loop.node.body:
            found = load_call(src, stmt)
            if found:
                why = invariance_problem(src, loop, stmt, found[0], 'load')
                if why is None:
                    return self._move(loop, stmt)
                reasons.append(f'{found[0]}: {why}')
        detail = f" ({'; '.join(reasons)})" if reasons else ' (no nl.load directly in its body)'
        raise RewriteError(f'no loop-invariant nl.load in {loop.describe()}{detail}')

    def _move(self, loop: Loop, stmt: ast.stmt) -> Applied:
        before = snippet(loop.node)
        remove_statement(loop.node.body, stmt)
        loop.body.insert(loop.index, stmt)
        return Applied(f'hoisted `{ast.unparse(stmt)}` out of the loop over {loop.var} ({loop.site}); it now '
                       'runs once instead of once per iteration', before, snippet([stmt, loop.node]))
