"""move_elementwise_engine: run an element-wise instruction on another engine (vector, scalar or gpsimd)."""
import ast
import copy
from typing import List, Optional, Tuple, Union

from ..kernel_ast import KernelSource, RewriteError, snippet
from .base import Applied, Candidate, Params, Transformation
from .common import call_arg
from .operand_kinds import OperandKinds

ENGINES = {'vector': 'vector_engine', 'scalar': 'scalar_engine', 'gpsimd': 'gpsimd_engine'}
BINARY = ('add', 'subtract', 'multiply', 'maximum', 'minimum')
ENGINE_OPS = ('nisa.tensor_tensor', 'nisa.tensor_scalar', 'nisa.tensor_copy', 'nisa.scalar_tensor_tensor',
              'nisa.memset')
TENSOR_TENSOR = ('nisa.tensor_tensor', 'nisa.scalar_tensor_tensor')
NO_PSUM_ON_GPSIMD = 'the GpSimd engine cannot access PSUM'

# (form, new call, current engine choice, new engine) or the reason the move is impossible
Move = Union[str, Tuple[str, ast.Call, str, str]]


def engine_hint(call: ast.Call) -> Optional[str]:
    """The last dotted part of the call's `engine=` argument ('vector_engine', ...), or None."""
    value = call_arg(call, None, 'engine')
    return ast.unparse(value).split('.')[-1] if value is not None else None


def _nisa(src: KernelSource, attr: str) -> ast.Attribute:
    alias = src.ensure_nisa_import()
    return ast.Attribute(value=ast.Name(id=alias, ctx=ast.Load()), attr=attr, ctx=ast.Load())


def _engine_keyword(src: KernelSource, engine: str) -> ast.keyword:
    alias = src.nisa_alias() if src.nisa else 'nisa'
    return ast.keyword(arg='engine', value=ast.Attribute(value=ast.Name(id=alias, ctx=ast.Load()),
                                                         attr=ENGINES[engine], ctx=ast.Load()))


def _binary_move(src: KernelSource, kinds: OperandKinds, call: ast.Call, name: str, engine: Optional[str]) -> Move:
    """nl.add/subtract/... on two tiles -> nisa.tensor_tensor; on a tile and a scalar -> nisa.tensor_scalar."""
    if len(call.args) < 2:
        return f'{name} without two positional operands'
    x, y = call.args[0], call.args[1]
    kx, ky = kinds.kind(x), kinds.kind(y)
    op = ast.Attribute(value=ast.Name(id=src.nl_alias(), ctx=ast.Load()), attr=name[3:], ctx=ast.Load())
    extra = [k for k in call.keywords if k.arg in ('dtype', 'mask')]
    tiles = ('tile', 'psum')
    if kx in tiles and ky in tiles:
        engine = engine or 'gpsimd'
        if engine == 'scalar':
            return 'the scalar engine (ACT) has no tensor-tensor instruction'
        if engine == 'gpsimd' and 'psum' in (kx, ky):
            return 'the GpSimd engine cannot access PSUM (an operand is a PSUM tile)'
        if kx == 'psum' and ky == 'psum':
            return 'both operands are PSUM tiles'
        new = ast.Call(func=_nisa(src, 'tensor_tensor'), args=[x, y],
                       keywords=[ast.keyword(arg='op', value=op)] + extra + [_engine_keyword(src, engine)])
        return 'tensor_tensor', new, 'auto', engine
    if kx in tiles and ky == 'scalar' or kx == 'scalar' and ky in tiles:
        tile_kind = kx if ky == 'scalar' else ky
        engine = engine or 'scalar'
        if engine == 'gpsimd' and tile_kind == 'psum':
            return NO_PSUM_ON_GPSIMD
        data, scalar = (x, y) if ky == 'scalar' else (y, x)
        keywords = [ast.keyword(arg='op0', value=op), ast.keyword(arg='operand0', value=scalar)]
        if kx == 'scalar':
            keywords.append(ast.keyword(arg='reverse0', value=ast.Constant(True)))
        new = ast.Call(func=_nisa(src, 'tensor_scalar'), args=[data],
                       keywords=keywords + extra + [_engine_keyword(src, engine)])
        return 'tensor_scalar', new, 'auto', engine
    return (f'cannot tell whether the operands of `{ast.unparse(call)}` are tiles or scalars '
            f'({ast.unparse(x)}: {kx or "unknown"}, {ast.unparse(y)}: {ky or "unknown"})')


def _copy_move(src: KernelSource, kinds: OperandKinds, call: ast.Call, engine: Optional[str]) -> Move:
    """nl.copy -> nisa.tensor_copy(engine=)."""
    engine = engine or 'scalar'
    if engine == 'gpsimd' and call.args and kinds.kind(call.args[0]) == 'psum':
        return NO_PSUM_ON_GPSIMD
    new = ast.Call(func=_nisa(src, 'tensor_copy'), args=list(call.args),
                   keywords=[k for k in call.keywords if k.arg != 'engine'] + [_engine_keyword(src, engine)])
    return 'tensor_copy', new, 'auto', engine


def _hint_move(src: KernelSource, kinds: OperandKinds, call: ast.Call, name: str, engine: Optional[str]) -> Move:
    """A nisa instruction that takes engine=: change (or add) the hint."""
    current = engine_hint(call) or 'auto'
    default = 'gpsimd' if name in ('nisa.tensor_tensor', 'nisa.scalar_tensor_tensor', 'nisa.memset') else 'scalar'
    if current == ENGINES.get(default):
        default = 'vector'
    engine = engine or default
    if engine == 'scalar' and name in TENSOR_TENSOR:
        return 'the scalar engine (ACT) has no tensor-tensor instruction'
    if engine == 'gpsimd' and any(kinds.kind(a) == 'psum' for a in call.args):
        return NO_PSUM_ON_GPSIMD
    if current == ENGINES[engine]:
        return f'already on the {engine} engine'
    new = copy.deepcopy(call)
    new.keywords = [k for k in new.keywords if k.arg != 'engine'] + [_engine_keyword(src, engine)]
    return name[5:], new, current, engine


def source_engine(form: str, current: str) -> str:
    """The engine the work runs on before the move: an engine= hint, or the compiler's choice without one
    (tensor-tensor work only VectorE and GpSimd can do, VectorE by default; tensor_scalar, copies and memsets go to
    ScalarE or VectorE: 'auto')."""
    for engine, hint in ENGINES.items():
        if current == hint:
            return engine
    return 'vector' if form in ('tensor_tensor', 'scalar_tensor_tensor') else 'auto'


def plan_move(src: KernelSource, kinds: OperandKinds, call: ast.Call, engine: Optional[str]) -> Move:
    """How call moves to engine (None: the default for its kind of work), or the reason it cannot."""
    name = src.call_name(call) or ''
    if name.startswith('nl.') and name[3:] in BINARY:
        return _binary_move(src, kinds, call, name, engine)
    if name == 'nl.copy':
        return _copy_move(src, kinds, call, engine)
    return _hint_move(src, kinds, call, name, engine)


class MoveElementwiseEngine(Transformation):
    id = 'move_elementwise_engine'
    summary = ('Run an element-wise instruction on another engine: nl.add/subtract/multiply/maximum/minimum and '
               'nl.copy become nisa.tensor_tensor / tensor_scalar / tensor_copy with engine=, or an existing '
               'engine= hint changes.')
    params_doc = {'engine': 'vector | scalar | gpsimd (default: gpsimd for tensor-tensor work, scalar for '
                            'tensor-scalar work and copies)',
                  'call': 'which eligible call of the statement, in source order (default 0)'}

    def _calls(self, src: KernelSource, stmt: ast.stmt) -> List[ast.Call]:
        out = []
        for node in ast.walk(stmt):
            name = src.call_name(node)
            if isinstance(node, ast.Call) and (name in ENGINE_OPS or name == 'nl.copy' or
                                               (name and name.startswith('nl.') and name[3:] in BINARY)):
                out.append(node)
        return sorted(out, key=lambda n: (n.lineno, n.col_offset))

    def candidates(self, src: KernelSource) -> List[Candidate]:
        out = []
        kinds = OperandKinds(src)
        for stmt, _, _, _ in src.statements():
            if isinstance(stmt, (ast.For, ast.If, ast.While, ast.With)):
                continue
            for i, call in enumerate(self._calls(src, stmt)):
                probe = copy.deepcopy(src)
                move = plan_move(probe, kinds, call, None)
                if isinstance(move, tuple):
                    out.append(Candidate(self.id, f'S{stmt.lineno}',
                                         f'run `{ast.unparse(call)}` at line {stmt.lineno} as {move[0]} on the '
                                         f'{move[3]} engine', {'engine': move[3], 'call': i},
                                         source_engine(move[0], move[2])))
        return out

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        stmt, _, _, _ = src.statement_at(site)
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
        kinds = OperandKinds(src)
        before = snippet(stmt)
        move = plan_move(src, kinds, call, engine)
        if isinstance(move, str):
            raise RewriteError(f'cannot move `{ast.unparse(call)}` ({src.filename}:{stmt.lineno}): {move}')
        form, new, current, engine = move
        _replace_call(stmt, call, new)
        return Applied(f'moved `{ast.unparse(call)}` ({src.filename}:{stmt.lineno}) from the {current} engine '
                       f'choice to the {engine} engine as {form}', before, snippet(stmt))


def _replace_call(stmt: ast.stmt, old: ast.Call, new: ast.Call) -> None:
    """Replaces the node `old` (by identity) with `new` inside stmt."""
    class Replace(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            if node is old:
                return ast.copy_location(new, node)
            self.generic_visit(node)
            return node
    Replace().visit(stmt)
