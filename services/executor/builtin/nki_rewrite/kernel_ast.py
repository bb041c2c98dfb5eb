"""Parsing an NKI kernel module and the syntax-tree helpers every transformation uses.

`KernelSource` parses a module, finds the kernel function (decorated with `@nki.jit` or named `kernel` /
`optimized_kernel`) and the aliases under which `neuronxcc.nki.language` and `neuronxcc.nki.isa` are imported.
`loops()` lists every loop of the kernel with a stable site id `L<line>`, `statements()` every statement with
its innermost loop (site `S<line>`). The name helpers say which names a piece of code reads, binds or writes
through; index_forms.py holds the linear (affine) index forms.
"""
import ast
import copy
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple, TypeVar, Union

# (statement, the body list holding it, its index there, its innermost enclosing loop)
Statement = Tuple[ast.stmt, List[ast.stmt], int, Optional['Loop']]

ASTNode = TypeVar('ASTNode', bound=ast.AST)

RANGE_KINDS = ('affine_range', 'sequential_range', 'static_range')


class RewriteError(Exception):
    """A transformation does not apply; the message is the precise reason shown to the caller."""


class KernelSource:
    """A parsed kernel module: the kernel function, the nl / nisa aliases, its loops and statements."""

    def __init__(self, source: str, filename: str = 'kernel.py') -> None:
        self.source = source
        self.filename = filename
        try:
            self.module = ast.parse(source, filename=filename)
        except SyntaxError as e:
            raise RewriteError(f'{filename}: not valid Python: {e.msg} (line {e.lineno})') from None
        except ValueError as e:
            raise RewriteError(f'{filename}: cannot be parsed: {e}') from None
        self.func = self._find_kernel()
        self.nl, self.nisa = self._aliases()
        self.added_import = False
        self._loop_index: Dict[int, Loop] = {}

    def _find_kernel(self) -> ast.FunctionDef:
        funcs = [n for n in self.module.body if isinstance(n, ast.FunctionDef)]
        for f in funcs:
            for d in f.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if isinstance(target, ast.Attribute) and target.attr in ('jit', 'trace', 'baremetal'):
                    return f
                if isinstance(target, ast.Name) and target.id in ('jit', 'trace'):
                    return f
        for name in ('kernel', 'optimized_kernel'):
            for f in funcs:
                if f.name == name:
                    return f
        raise RewriteError(f'{self.filename}: no kernel function (a function decorated with @nki.jit, or named '
                           '`kernel` / `optimized_kernel`)')

    def _aliases(self) -> Tuple[Set[str], Set[str]]:
        nl: Set[str] = set()
        nisa: Set[str] = set()
        for node in ast.walk(self.module):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.endswith('nki.language'):
                        nl.add(a.asname or a.name)
                    elif a.name.endswith('nki.isa'):
                        nisa.add(a.asname or a.name)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    full = node.module + '.' + a.name
                    if full.endswith('nki.language'):
                        nl.add(a.asname or a.name)
                    elif full.endswith('nki.isa'):
                        nisa.add(a.asname or a.name)
        return nl or {'nl'}, nisa or {'nisa'}

    # ----- naming -----
    def nisa_alias(self) -> str:
        return sorted(self.nisa)[0]

    def nl_alias(self) -> str:
        return sorted(self.nl)[0]

    def ensure_nisa_import(self) -> str:
        """Make sure the module imports neuronxcc.nki.isa; returns the alias to use."""
        for node in self.module.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                text = ast.unparse(node)
                if 'nki.isa' in text:
                    return self.nisa_alias()
        plain_nki = any('import nki' in ast.unparse(n) and 'neuronxcc' not in ast.unparse(n)
                        for n in self.module.body if isinstance(n, (ast.Import, ast.ImportFrom)))
        base = 'nki' if plain_nki else 'neuronxcc.nki'
        imp = ast.parse(f'import {base}.isa as nisa').body[0]
        last = 0
        for i, node in enumerate(self.module.body):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last = i + 1
        self.module.body.insert(last, imp)
        self.nisa = {'nisa'}
        self.added_import = True
        return 'nisa'

    def call_name(self, node: ast.AST) -> Optional[str]:
        """'nl.load' / 'nisa.nc_matmul' (aliases normalised) for a Call node, else None."""
        if not isinstance(node, ast.Call):
            return None
        f = node.func
        if isinstance(f, ast.Attribute):
            base = ast.unparse(f.value)
            if base in self.nl or base.endswith('nki.language'):
                return 'nl.' + f.attr
            if base in self.nisa or base.endswith('nki.isa'):
                return 'nisa.' + f.attr
            return base + '.' + f.attr
        if isinstance(f, ast.Name):
            return f.id
        return None

    # ----- loops -----
    def loops(self) -> List['Loop']:
        """Every loop of the kernel as Loop objects, outermost first, in source order."""
        found: List[Loop] = []

        def visit(body: List[ast.stmt], parent: Optional[Loop], depth: int, path: List[int]) -> None:
            for index, stmt in enumerate(body):
                if isinstance(stmt, ast.For):
                    loop = Loop(self, stmt, body, index, parent, depth, path + [index])
                    found.append(loop)
                    visit(stmt.body, loop, depth + 1, path + [index])
                else:
                    for field in ('body', 'orelse', 'finalbody'):
                        inner = getattr(stmt, field, None)
                        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                            visit(inner, parent, depth, path + [index])
        visit(self.func.body, None, 0, [])
        return found

    def loop_at(self, site: str) -> 'Loop':
        """The loop at site `L<line>`; RewriteError naming the loops there are when there is none."""
        parse_site(site, 'L')
        for loop in self.loops():
            if loop.site == site:
                return loop
        known = ', '.join(l.site for l in self.loops()) or 'none'
        raise RewriteError(f'no loop at site {site} in {self.filename} (loops: {known})')

    def statements(self) -> List[Statement]:
        """(stmt, containing body list, index, innermost enclosing Loop or None) for every statement."""
        out: List[Statement] = []

        def visit(body: List[ast.stmt], loop: Optional[Loop]) -> None:
            for index, stmt in enumerate(body):
                out.append((stmt, body, index, loop))
                if isinstance(stmt, ast.For):
                    visit(stmt.body, self._loop_for(stmt))
                else:
                    for field in ('body', 'orelse', 'finalbody'):
                        inner = getattr(stmt, field, None)
                        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                            visit(inner, loop)
        self._loop_index = {id(l.node): l for l in self.loops()}
        visit(self.func.body, None)
        return out

    def _loop_for(self, node: ast.For) -> Optional['Loop']:
        return self._loop_index.get(id(node))

    def statement_at(self, site: str) -> Statement:
        """The simple (non-loop) statement at site `S<line>`; RewriteError when there is none."""
        line = parse_site(site, 'S')
        for stmt, body, index, loop in self.statements():
            if stmt.lineno == line and not isinstance(stmt, ast.For):
                return stmt, body, index, loop
        raise RewriteError(f'no simple statement at site {site} ({self.filename}:{line})')

    def render(self) -> str:
        """The module source with the kernel function re-generated; text outside the function is kept as is."""
        ast.fix_missing_locations(self.module)
        lines = self.source.splitlines(keepends=True)
        start = self.func.lineno - 1
        if self.func.decorator_list:
            start = min(d.lineno for d in self.func.decorator_list) - 1
        end = self.func.end_lineno
        func_text = ast.unparse(self.func) + '\n'
        head = ''.join(lines[:start])
        tail = ''.join(lines[end:])
        if self.added_import:
            head = _insert_import(head, 'import neuronxcc.nki.isa as nisa\n')
        return head + func_text + tail


def _insert_import(head: str, line: str) -> str:
    lines = head.splitlines(keepends=True)
    last = -1
    for i, l in enumerate(lines):
        if l.startswith('import ') or l.startswith('from '):
            last = i
    lines.insert(last + 1, line)
    return ''.join(lines)


def parse_site(site: object, kind: str) -> int:
    """The line number of a site `<kind><line>`; RewriteError when site has another form."""
    if not isinstance(site, str) or len(site) < 2 or site[0] != kind or not site[1:].isdigit():
        expected = 'L<line> (a loop)' if kind == 'L' else 'S<line> (a statement)'
        raise RewriteError(f'site {site!r} is not of the form {expected}')
    return int(site[1:])


class Loop:
    """A `for` loop of the kernel. kind: affine_range, sequential_range, static_range, range or other."""

    def __init__(self, src: KernelSource, node: ast.For, body: List[ast.stmt], index: int, parent: Optional['Loop'],
                 depth: int, path: List[int]) -> None:
        self.src = src
        self.node = node
        self.body = body          # the list holding the loop statement
        self.index = index
        self.parent = parent
        self.depth = depth
        self.path = path
        self.site = f'L{node.lineno}'
        self.var: Optional[str] = node.target.id if isinstance(node.target, ast.Name) else None
        self.kind = 'other'
        self.args: List[ast.expr] = []
        it = node.iter
        if isinstance(it, ast.Call):
            name = src.call_name(it)
            if name == 'range':
                self.kind = 'range'
            elif name and name.startswith('nl.') and name[3:] in RANGE_KINDS:
                self.kind = name[3:]
            self.args = list(it.args)

    @property
    def affine(self) -> bool:
        return self.kind in ('affine_range', 'sequential_range', 'static_range', 'range')

    def trip(self) -> Optional[ast.expr]:
        """The trip count as an expression when the loop is range(N) / range(0, N) / nl.*_range(N)."""
        if not self.affine or self.var is None:
            return None
        args = self.args
        if len(args) == 1:
            return args[0]
        if len(args) == 2 and _const(args[0]) == 0:
            return args[1]
        if len(args) == 3 and _const(args[0]) == 0 and _const(args[2]) == 1:
            return args[1]
        return None

    def trip_text(self) -> str:
        """The trip count's source text, or the whole iterator's when the trip count is not known."""
        trip = self.trip()
        return ast.unparse(trip) if trip is not None else ast.unparse(self.node.iter)

    def describe(self) -> str:
        return (f'{self.src.filename}:{self.node.lineno} loop over {self.var} ({self.kind}, {self.trip_text()} '
                'iterations)')


def _const(node: ast.expr) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


# ----- names -----
def names_read(node: ast.AST) -> Set[str]:
    """Names loaded anywhere in node."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_bound(stmts: List[ast.stmt]) -> Set[str]:
    """Names (re)bound by a list of statements, including loop variables of nested loops."""
    out: Set[str] = set()
    for stmt in stmts:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


def names_mutated(stmts: List[ast.stmt]) -> Set[str]:
    """Names whose contents are written through a subscript (`x[...] = v`, `x[...] += v`)."""
    out: Set[str] = set()
    for stmt in stmts:
        for n in ast.walk(stmt):
            targets: List[ast.expr] = []
            if isinstance(n, ast.Assign):
                targets = n.targets
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                targets = [n.target]
            for t in targets:
                if isinstance(t, ast.Subscript):
                    base = subscript_base(t)
                    if base:
                        out.add(base)
    return out


def subscript_base(node: ast.AST) -> Optional[str]:
    """The tensor name under subscripts and attributes (`a.b[i][j]` is `a`), else None."""
    while isinstance(node, ast.Subscript):
        node = node.value
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def substitute(node: ASTNode, mapping: Mapping[str, ast.expr]) -> ASTNode:
    """A copy of node with Name loads replaced by expressions (mapping: name -> ast.expr)."""
    class Sub(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            if isinstance(n.ctx, ast.Load) and n.id in mapping:
                return copy.deepcopy(mapping[n.id])
            return n
    result: ASTNode = Sub().visit(copy.deepcopy(node))
    return result


def rename(node: ASTNode, old: str, new: str) -> ASTNode:
    """Rename a name everywhere (loads and stores) in a copy of node."""
    class Ren(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            if n.id == old:
                return ast.copy_location(ast.Name(id=new, ctx=n.ctx), n)
            return n
    result: ASTNode = Ren().visit(copy.deepcopy(node))
    return result


def fresh_name(src: KernelSource, base: str) -> str:
    """base, or base2, base3, ...: the first that no name or argument of the module uses."""
    used = {n.id for n in ast.walk(src.module) if isinstance(n, ast.Name)} | \
           {a.arg for a in ast.walk(src.module) if isinstance(a, ast.arg)}
    if base not in used:
        return base
    i = 2
    while f'{base}{i}' in used:
        i += 1
    return f'{base}{i}'


def snippet(nodes: Union[ast.AST, Sequence[ast.AST]]) -> str:
    """The source text of a node or of a list of nodes, one per line."""
    if isinstance(nodes, ast.AST):
        nodes = [nodes]
    return '\n'.join(ast.unparse(n) for n in nodes)
