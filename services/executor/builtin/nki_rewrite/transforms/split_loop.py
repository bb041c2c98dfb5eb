"""split_loop: strip-mine an affine loop of N iterations into N/F outer times F inner iterations."""
import ast
import copy
from typing import List, Optional

from ..const_eval import const_int
from ..kernel_ast import KernelSource, Loop, RewriteError, fresh_name, names_bound, snippet, substitute
from .base import Applied, Candidate, Params, Transformation
from .common import counted_loop


def _range_call(loop: Loop, count: ast.expr) -> ast.Call:
    """The loop's own range call (same callee) over `count` iterations."""
    call = copy.deepcopy(loop.node.iter)
    assert isinstance(call, ast.Call)
    call.args = [count]
    call.keywords = []
    return call


class SplitLoop(Transformation):
    id = 'split_loop'
    summary = 'Split (strip-mine) an affine loop of N iterations into N/F outer times F inner iterations.'
    site_kind = 'L'
    params_doc = {'factor': 'inner trip count F (default 2; must divide N)'}

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        for loop in src.loops():
            if self._problem(loop, 2) is None:
                out.append(Candidate(self.id, loop.site, f'split the loop over {loop.var} ({loop.site}, '
                                     f'{loop.trip_text()} iterations) into an outer and an inner loop',
                                     {'factor': 2}))
        return out

    def _problem(self, loop: Loop, factor: int) -> Optional[str]:
        counted = counted_loop(loop)
        if isinstance(counted, str):
            return counted
        var, trip = counted
        if factor < 2:
            return f'factor {factor} must be at least 2'
        n = const_int(trip)
        if n is not None and n % factor:
            return f'trip count {n} is not a multiple of {factor}'
        if n is not None and n == factor:
            return f'trip count {n} equals the factor (nothing to split)'
        if var in names_bound(loop.node.body):
            return f'the body rebinds {var}'
        return None

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        loop = src.loop_at(site)
        try:
            factor = int(params.get('factor', 2))
        except (TypeError, ValueError):
            raise RewriteError(f'factor must be an integer, got {params.get("factor")!r}') from None
        why = self._problem(loop, factor)
        if why:
            raise RewriteError(f'cannot split {loop.describe()}: {why}')
        trip = loop.trip()
        assert trip is not None and loop.var is not None
        outer_var = fresh_name(src, loop.var + '_o')
        inner_var = fresh_name(src, loop.var + '_i')
        index = ast.BinOp(left=ast.BinOp(left=ast.Name(id=outer_var, ctx=ast.Load()), op=ast.Mult(),
                                         right=ast.Constant(factor)),
                          op=ast.Add(), right=ast.Name(id=inner_var, ctx=ast.Load()))
        body = [substitute(s, {loop.var: index}) for s in loop.node.body]
        n = const_int(trip)
        count: ast.expr = ast.Constant(n // factor) if n is not None else \
            ast.BinOp(left=copy.deepcopy(trip), op=ast.FloorDiv(), right=ast.Constant(factor))
        inner = ast.For(target=ast.Name(id=inner_var, ctx=ast.Store()),
                        iter=_range_call(loop, ast.Constant(factor)), body=body, orelse=[], lineno=loop.node.lineno)
        outer = ast.For(target=ast.Name(id=outer_var, ctx=ast.Store()), iter=_range_call(loop, count),
                        body=[inner], orelse=[], lineno=loop.node.lineno)
        before = snippet(loop.node)
        new: List[ast.stmt] = [outer]
        if n is None:
            check = ast.parse(f'assert ({ast.unparse(trip)}) % {factor} == 0').body[0]
            new = [check, outer]
        loop.body[loop.index:loop.index + 1] = new
        return Applied(f'split the loop over {loop.var} ({loop.site}) into {outer_var} ({ast.unparse(count)} '
                       f'iterations) x {inner_var} ({factor}); {loop.var} = {outer_var}*{factor} + {inner_var}',
                       before, snippet(new))
