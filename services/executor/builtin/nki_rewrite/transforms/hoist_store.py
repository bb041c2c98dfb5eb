"""hoist_invariant_store: sink an nl.store that stores the same value to the same place to after the loop."""
import ast
from typing import List, Optional

from ..kernel_ast import KernelSource, Loop, RewriteError, names_mutated, names_read, snippet, subscript_base
from .base import Applied, Candidate, Params, Transformation
from .common import (affine_loop_problem, affine_loop_statements, invariance_problem, loop_of_statement,
                     remove_statement, store_call, tensors_written)


class HoistInvariantStore(Transformation):
    id = 'hoist_invariant_store'
    summary = 'Sink an nl.store whose destination and value do not change in the loop to after the loop.'

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        for loop, stmt in affine_loop_statements(src):
            if store_call(src, stmt) and self._problem(src, loop, stmt) is None:
                out.append(Candidate(self.id, f'S{stmt.lineno}',
                                     f'sink `{ast.unparse(stmt)}` after the loop over {loop.var} ({loop.site}):'
                                     ' it stores the same value to the same place every iteration'))
        return out

    def _problem(self, src: KernelSource, loop: Loop, stmt: ast.stmt) -> Optional[str]:
        found = store_call(src, stmt)
        assert found is not None
        _, dst, value = found
        why = invariance_problem(src, loop, stmt, None, 'store')
        if why:
            return why
        base = subscript_base(dst)
        others = [s for s in loop.node.body if s is not stmt]
        if any(base in names_read(s) for s in others):
            return f'the loop also accesses {base}'
        value_names = names_read(value)
        if value_names & (names_mutated(others) | tensors_written(src, others)):
            return 'the stored value is modified inside the loop'
        return None

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        if site.startswith('L'):
            loop = src.loop_at(site)
            for stmt in loop.node.body:
                if store_call(src, stmt) and self._problem(src, loop, stmt) is None:
                    return self._move(loop, stmt)
            raise RewriteError(f'no loop-invariant nl.store in {loop.describe()}')
        stmt, loop = loop_of_statement(src, site)
        if not store_call(src, stmt):
            raise RewriteError(f'{src.filename}:{stmt.lineno} is not `nl.store(tensor[...], value=...)`')
        why = affine_loop_problem(loop) or self._problem(src, loop, stmt)
        if why:
            raise RewriteError(f'cannot sink the nl.store at {src.filename}:{stmt.lineno} out of {loop.describe()}:'
                               f' {why}')
        return self._move(loop, stmt)

    def _move(self, loop: Loop, stmt: ast.stmt) -> Applied:
        before = snippet(loop.node)
        remove_statement(loop.node.body, stmt)
        loop.body.insert(loop.index + 1, stmt)
        return Applied(f'moved `{ast.unparse(stmt)}` after the loop over {loop.var} ({loop.site}); it now runs '
                       'once', before, snippet([loop.node, stmt]))
