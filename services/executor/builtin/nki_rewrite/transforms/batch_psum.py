"""batch_psum_evictions: evict and store a PSUM tile in one copy and one store instead of column strips."""
import ast
import copy
from typing import List, NamedTuple, Union

from ..const_eval import const_int
from ..index_forms import Linear, index_components, linear, make_index, slice_node
from ..kernel_ast import KernelSource, Loop, RewriteError, names_read, snippet
from .base import Applied, Candidate, Params, Transformation
from .common import call_arg, counted_loop, store_call, strip_var_slice
from .operand_kinds import OperandKinds

EVICTIONS = ('nl.copy', 'nisa.tensor_copy', 'nisa.activation')
PSUM_BANK_BYTES = 2048
BYTES_PER_ELEMENT = 4


class _Strip(NamedTuple):
    """A column strip `T[..., c + j*W : c + (j+1)*W]`: the subscript, the strip's component, W and c + j*W."""
    sub: ast.Subscript
    pos: int
    width: int
    lower: Linear


class _Match(NamedTuple):
    evict: ast.Assign
    store: ast.Expr
    psum: _Strip
    dst: _Strip


def _strip(sub: ast.Subscript, var: str) -> Union[str, _Strip]:
    parsed = strip_var_slice(sub, var)
    return parsed if isinstance(parsed, str) else _Strip(sub, *parsed)


def _match(src: KernelSource, kinds: OperandKinds, loop: Loop) -> Union[str, _Match]:
    """The eviction and store of a strip-wise PSUM eviction loop, or why the loop is not one."""
    counted = counted_loop(loop)
    if isinstance(counted, str):
        return counted
    var, trip = counted
    body = [s for s in loop.node.body if not isinstance(s, ast.Pass)]
    if len(body) != 2:
        return f'the loop body has {len(body)} statements (need an eviction then a store)'
    evict, store = body
    if not (isinstance(evict, ast.Assign) and len(evict.targets) == 1 and isinstance(evict.targets[0], ast.Name)
            and isinstance(evict.value, ast.Call) and src.call_name(evict.value) in EVICTIONS):
        return 'the first statement is not `t = nl.copy / nisa.tensor_copy / nisa.activation(PSUM strip)`'
    call = evict.value
    data = call_arg(call, 1 if src.call_name(call) == 'nisa.activation' else 0, 'data', 'src')
    if not isinstance(data, ast.Subscript) or kinds.kind(data) != 'psum':
        return 'the evicted operand is not a column strip of a PSUM tile'
    other = [a for a in list(call.args) + [k.value for k in call.keywords] if a is not data]
    if any(var in names_read(a) for a in other):
        return f'the eviction arguments other than the PSUM strip depend on {var}'
    psum = _strip(data, var)
    if isinstance(psum, str):
        return f'PSUM strip: {psum}'
    found = store_call(src, store)
    if not found or not (isinstance(found[2], ast.Name) and found[2].id == evict.targets[0].id):
        return 'the second statement is not `nl.store(dst[...], value=t)` of the evicted tile'
    dst = _strip(found[1], var)
    if isinstance(dst, str):
        return f'store: {dst}'
    if dst.width != psum.width:
        return 'the PSUM strips and the stored strips have different widths'
    n = const_int(trip)
    if n is not None and n * psum.width * BYTES_PER_ELEMENT > PSUM_BANK_BYTES:
        return (f'the batched eviction would cover {n * psum.width * BYTES_PER_ELEMENT} bytes per partition '
                '(> one 2 KiB bank)')
    assert isinstance(store, ast.Expr)
    return _Match(evict, store, psum, dst)


def _widen_strip(stmt: ast.stmt, strip: _Strip, span: ast.Slice) -> ast.stmt:
    """A copy of stmt whose subscripts equal to the strip's cover `span` instead."""
    new = copy.deepcopy(stmt)
    for node in ast.walk(new):
        if isinstance(node, ast.Subscript) and ast.dump(node) == ast.dump(strip.sub):
            comps = index_components(node)
            comps[strip.pos] = copy.deepcopy(span)
            node.slice = make_index(comps)
    return new


class BatchPsumEvictions(Transformation):
    id = 'batch_psum_evictions'
    summary = ('Replace a loop that evicts a PSUM tile in column strips (copy + store per strip) by one eviction '
               'and one store of the whole span.')
    site_kind = 'L'

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        kinds = OperandKinds(src)
        for loop in src.loops():
            if isinstance(_match(src, kinds, loop), _Match):
                out.append(Candidate(self.id, loop.site, f'evict and store the PSUM strips of the loop over '
                                     f'{loop.var} ({loop.site}) in one copy and one store'))
        return out

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        loop = src.loop_at(site)
        m = _match(src, OperandKinds(src), loop)
        if isinstance(m, str):
            raise RewriteError(f'no strip-wise PSUM eviction in {loop.describe()}: {m}')
        trip = loop.trip()
        assert trip is not None and loop.var is not None
        n = const_int(trip)
        w = m.psum.width
        var = loop.var

        def span(lower: Linear) -> ast.Slice:
            base = lower.without(var)
            if n is not None:
                return slice_node(base.to_ast(), base.add(linear(ast.Constant(n * w))).to_ast())
            return slice_node(base.to_ast(), ast.BinOp(left=base.to_ast(), op=ast.Add(), right=ast.BinOp(
                left=copy.deepcopy(trip), op=ast.Mult(), right=ast.Constant(w))))

        before = snippet(loop.node)
        new_evict = _widen_strip(m.evict, m.psum, span(m.psum.lower))
        new_store = _widen_strip(m.store, m.dst, span(m.dst.lower))
        loop.body[loop.index:loop.index + 1] = [new_evict, new_store]
        width = n * w if n is not None else f'{ast.unparse(trip)}*{w}'
        return Applied(f'replaced {ast.unparse(trip)} strip-wise PSUM evictions and stores of {w} columns '
                       f'({loop.site}) by one eviction and one store of {width} columns', before,
                       snippet([new_evict, new_store]))
