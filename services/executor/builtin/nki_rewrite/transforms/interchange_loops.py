"""interchange_loops: swap two perfectly nested affine loops whose iterations are independent."""
import ast
from typing import List, Optional

from ..kernel_ast import KernelSource, Loop, RewriteError, names_read, snippet
from .base import Applied, Candidate, Params, Transformation


class InterchangeLoops(Transformation):
    id = 'interchange_loops'
    summary = 'Swap two perfectly nested affine loops (both nl.affine_range: iterations are independent).'
    site_kind = 'L'

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        for loop in src.loops():
            if self._problem(src, loop) is None:
                inner = loop.node.body[0]
                assert isinstance(inner, ast.For)
                out.append(Candidate(self.id, loop.site, f'interchange the loops over {loop.var} and '
                                     f'{ast.unparse(inner.target)} ({loop.site})'))
        return out

    def _problem(self, src: KernelSource, loop: Loop) -> Optional[str]:
        body = [s for s in loop.node.body if not isinstance(s, ast.Pass)]
        if len(body) != 1 or not isinstance(body[0], ast.For):
            return (f'{loop.site} is not perfectly nested: its body has {len(body)} statements besides an inner loop'
                    if any(isinstance(s, ast.For) for s in body) else f'{loop.site} has no inner loop')
        inner = Loop(src, body[0], loop.node.body, 0, loop, loop.depth + 1, loop.path + [0])
        for each in (loop, inner):
            if each.kind not in ('affine_range', 'static_range'):
                return (f'interchange needs independent iterations (nl.affine_range); the loop over {each.var} at '
                        f'{each.site} is {each.kind}')
        if loop.var in names_read(inner.node.iter):
            return f'the inner trip count depends on {loop.var}'
        return None

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        loop = src.loop_at(site)
        why = self._problem(src, loop)
        if why:
            raise RewriteError(f'cannot interchange at {loop.describe()}: {why}')
        inner = loop.node.body[0]
        assert isinstance(inner, ast.For)
        before = snippet(loop.node)
        loop.node.target, inner.target = inner.target, loop.node.target
        loop.node.iter, inner.iter = inner.iter, loop.node.iter
        return Applied(f'interchanged the loops over {ast.unparse(inner.target)} and {ast.unparse(loop.node.target)} '
                       f'({loop.site}): {ast.unparse(loop.node.target)} is now the outer loop', before,
                       snippet(loop.node))
