"""analyze / apply: the JSON-level API over the transformation catalogue, plus the static features."""
import ast
from typing import Any, Dict, List, Optional, Tuple

from .const_eval import const_int
from .index_forms import index_components, linear
from .kernel_ast import KernelSource, RewriteError
from .plan import Plan
from .transforms import BY_ID, CATALOGUE
from .transforms.move_engine import engine_hint

PE_OPS = {'nisa.nc_matmul', 'nl.matmul', 'nisa.nc_transpose', 'nl.transpose'}
DMA_OPS = {'nl.load', 'nl.store', 'nisa.dma_copy', 'nl.load_transpose2d'}
DVE_DEFAULT = {'nisa.tensor_tensor', 'nisa.tensor_reduce', 'nisa.reciprocal', 'nisa.tensor_tensor_scan',
               'nisa.scalar_tensor_tensor', 'nl.loop_reduce', 'nl.sum', 'nl.max', 'nl.min', 'nl.mean',
               'nl.add', 'nl.subtract', 'nl.multiply', 'nl.divide', 'nl.maximum', 'nl.minimum'}
ACT_DEFAULT = {'nisa.activation', 'nisa.activation_reduce', 'nl.exp', 'nl.log', 'nl.sqrt', 'nl.rsqrt', 'nl.tanh',
               'nl.sigmoid', 'nl.silu', 'nl.gelu', 'nl.relu', 'nl.square', 'nl.softplus', 'nl.sin', 'nl.cos'}
EITHER = {'nisa.tensor_scalar', 'nl.copy', 'nisa.tensor_copy', 'nisa.memset'}


JSON = Dict[str, Any]


def catalogue() -> List[JSON]:
    """Every transformation: id, summary, site kind and documented parameters."""
    return [{'id': t.id, 'summary': t.summary, 'site_kind': 'loop' if t.site_kind == 'L' else 'statement',
             'params': t.params_doc} for t in CATALOGUE]


def analyze(source: str, filename: str = 'kernel.py') -> JSON:
    """The applicable transformations (with their plan lines) and the static features; never raises."""
    try:
        src = KernelSource(source, filename)
        candidates = []
        for t in CATALOGUE:
            try:
                found = t.candidates(KernelSource(source, filename))
            except RewriteError:
                found = []
            for c in found:
                entry = c.to_json()
                entry['plan'] = Plan(c.transformation, c.site, c.params).to_line()
                candidates.append(entry)
        return {'ok': True, 'kernel': src.func.name, 'transformations': candidates, 'features': features(src)}
    except RewriteError as e:
        return {'ok': False, 'reason': str(e)}
    except RecursionError:
        return {'ok': False, 'reason': f'{filename}: the kernel is nested too deeply to analyse'}
    except Exception as e:  # never a traceback to the caller
        return {'ok': False, 'reason': f'internal error while analysing {filename}: {type(e).__name__}: {e}'}


def apply(source: str, transformation: str, site: Optional[str] = None, params: Optional[Dict[str, Any]] = None,
          filename: str = 'kernel.py') -> JSON:
    """Applies one transformation (at its first candidate site when site is None); never raises."""
    params = params or {}
    try:
        if not isinstance(params, dict):
            raise RewriteError('params must be a JSON object')
        t = BY_ID.get(transformation)
        if t is None:
            raise RewriteError(f'unknown transformation {transformation!r} (known: {", ".join(sorted(BY_ID))})')
        src = KernelSource(source, filename)
        if site is None:
            found = t.candidates(KernelSource(source, filename))
            if not found:
                raise RewriteError(f'{transformation} applies nowhere in {filename}')
            site = found[0].site
            if not params:
                params = dict(found[0].params)
        applied = t.apply(src, site, params)
        new_source = src.render()
        try:
            ast.parse(new_source)
        except SyntaxError as e:
            raise RewriteError(f'internal error: the rewritten kernel does not parse ({e.msg}, line {e.lineno})')
        plan = Plan(transformation, site, params)
        return {'ok': True, 'source': new_source, 'description': applied.description,
                'before_snippet': applied.before, 'after_snippet': applied.after,
                'plan': plan.to_line(), 'sentence': plan.sentence(applied.description)}
    except RewriteError as e:
        return {'ok': False, 'reason': str(e)}
    except RecursionError:
        return {'ok': False, 'reason': f'{filename}: the kernel is nested too deeply to rewrite'}
    except Exception as e:
        return {'ok': False, 'reason': f'internal error while applying {transformation}: {type(e).__name__}: {e}'}


# ----- static features -----
def _tile_shape(sub: ast.Subscript) -> List[Optional[int]]:
    shape: List[Optional[int]] = []
    for c in index_components(sub):
        if isinstance(c, ast.Slice):
            if c.lower is None and c.upper is None:
                shape.append(None)
                continue
            if c.upper is None:
                shape.append(None)
                continue
            width = linear(c.upper).add(linear(c.lower) if c.lower is not None else linear(ast.Constant(0)), -1)
            shape.append(width.const if width.is_const() else None)
    return shape


def _engine(src: KernelSource, call: ast.Call) -> Optional[str]:
    name = src.call_name(call)
    hint = engine_hint(call)
    if hint in ('vector_engine', 'scalar_engine', 'gpsimd_engine'):
        return {'vector_engine': 'dve', 'scalar_engine': 'act', 'gpsimd_engine': 'pool'}[hint]
    if name in PE_OPS:
        return 'pe'
    if name in DMA_OPS:
        return 'dma'
    if name in ACT_DEFAULT:
        return 'act'
    if name in DVE_DEFAULT:
        return 'dve'
    if name in EITHER:
        return 'auto'
    return None


def _counts(src: KernelSource, stmts: List[ast.stmt]) -> Tuple[Dict[str, int], Dict[str, int], List[JSON]]:
    counts = {'loads': 0, 'stores': 0, 'matmuls': 0, 'transposes': 0, 'elementwise': 0}
    engines: Dict[str, int] = {}
    dma: List[JSON] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            name = src.call_name(node)
            eng = _engine(src, node)
            if eng:
                engines[eng] = engines.get(eng, 0) + 1
            if name == 'nl.load' or name == 'nl.store':
                counts['loads' if name == 'nl.load' else 'stores'] += 1
                arg = node.args[0] if node.args else None
                if isinstance(arg, ast.Subscript):
                    dma.append({'op': name[3:], 'line': node.lineno, 'tensor': ast.unparse(arg.value),
                                'shape': _tile_shape(arg)})
            elif name in ('nisa.nc_matmul', 'nl.matmul'):
                if any(k.arg == 'is_transpose' and ast.unparse(k.value) == 'True' for k in node.keywords):
                    counts['transposes'] += 1
                else:
                    counts['matmuls'] += 1
            elif name in ('nisa.nc_transpose', 'nl.transpose'):
                counts['transposes'] += 1
            elif eng in ('act', 'dve', 'pool', 'auto'):
                counts['elementwise'] += 1
    return counts, engines, dma


def features(src: KernelSource) -> JSON:
    """Static features of the kernel: per-loop counts and engines, totals, DMA shapes, loop depth."""
    loops: List[JSON] = []
    for loop in src.loops():
        trip = loop.trip()
        direct = [s for s in loop.node.body if not isinstance(s, ast.For)]
        counts, engines, dma = _counts(src, loop.node.body)
        direct_counts, _, _ = _counts(src, direct)
        loops.append({'site': loop.site, 'var': loop.var, 'kind': loop.kind, 'depth': loop.depth,
                      'trip': ast.unparse(trip) if trip is not None else None,
                      'trip_const': const_int(trip) if trip is not None else None,
                      'parent': loop.parent.site if loop.parent else None,
                      'direct': direct_counts, 'nested': counts, 'engines': engines,
                      'dma_widths': sorted({d['shape'][-1] for d in dma if d['shape'] and d['shape'][-1]})})
    counts, engines, dma = _counts(src, src.func.body)
    return {'loops': loops, 'totals': counts, 'engine_mix': engines, 'dma': dma,
            'max_loop_depth': max((loop.depth for loop in src.loops()), default=-1) + 1}
