"""Parsing an NKI kernel module and the syntax-tree helpers every transformation uses.

`KernelSource` parses a module, finds the kernel function (decorated with `@nki.jit` or named `kernel` /
`optimized_kernel`) and the aliases under which `neuronxcc.nki.language` and `neuronxcc.nki.isa` are imported.
`loops()` lists every loop of the kernel with a stable site id `L<line>`. The linear-form helpers decide
whether an index expression is affine in a loop variable (`k * 128 + j * 32` is `{k: 128, j: 32}`).
"""
import ast
import copy

RANGE_KINDS = ('affine_range', 'sequential_range', 'static_range')


class RewriteError(Exception):
    """A transformation does not apply; the message is the precise reason shown to the caller."""


class KernelSource:
    def __init__(self, source, filename='kernel.py'):
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

    def _find_kernel(self):
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

    def _aliases(self):
        nl, nisa = set(), set()
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
    def nisa_alias(self):
        return sorted(self.nisa)[0]

    def nl_alias(self):
        return sorted(self.nl)[0]

    def ensure_nisa_import(self):
        """Make sure the module imports neuronxcc.nki.isa; returns the alias to use."""
        for node in self.module.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                text = ast.unparse(node)
                if 'nki.isa' in text:
                    return self.nisa_alias()
        base = 'nki' if any('import nki' in ast.unparse(n) and 'neuronxcc' not in ast.unparse(n)
                            for n in self.module.body if isinstance(n, (ast.Import, ast.ImportFrom))) else 'neuronxcc.nki'
        imp = ast.parse(f'import {base}.isa as nisa').body[0]
        last = 0
        for i, node in enumerate(self.module.body):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last = i + 1
        self.module.body.insert(last, imp)
        self.nisa = {'nisa'}
        self.added_import = True
        return 'nisa'

    def call_name(self, node):
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
    def loops(self):
        """Every loop of the kernel as Loop objects, outermost first, in source order."""
        found = []

        def visit(body, parent, depth, path):
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

    def loop_at(self, site):
        parse_site(site, 'L')
        for loop in self.loops():
            if loop.site == site:
                return loop
        known = ', '.join(l.site for l in self.loops()) or 'none'
        raise RewriteError(f'no loop at site {site} in {self.filename} (loops: {known})')

    def statements(self):
        """(stmt, containing body list, index, innermost enclosing Loop or None) for every statement."""
        out = []

        def visit(body, loop):
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

    def _loop_for(self, node):
        return self._loop_index.get(id(node))

    def statement_at(self, site):
        line = parse_site(site, 'S')
        for stmt, body, index, loop in self.statements():
            if stmt.lineno == line and not isinstance(stmt, ast.For):
                return stmt, body, index, loop
        raise RewriteError(f'no simple statement at site {site} ({self.filename}:{line})')

    def render(self):
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
        if getattr(self, 'added_import', False):
            head = _insert_import(head, 'import neuronxcc.nki.isa as nisa\n')
        return head + func_text + tail


def _insert_import(head, line):
    lines = head.splitlines(keepends=True)
    last = -1
    for i, l in enumerate(lines):
        if l.startswith('import ') or l.startswith('from '):
            last = i
    lines.insert(last + 1, line)
    return ''.join(lines)


def parse_site(site, kind):
    if not isinstance(site, str) or len(site) < 2 or site[0] != kind or not site[1:].isdigit():
        expected = 'L<line> (a loop)' if kind == 'L' else 'S<line> (a statement)'
        raise RewriteError(f'site {site!r} is not of the form {expected}')
    return int(site[1:])


class Loop:
    """A `for` loop of the kernel. kind: affine_range, sequential_range, static_range, range or other."""

    def __init__(self, src, node, body, index, parent, depth, path):
        self.src = src
        self.node = node
        self.body = body          # the list holding the loop statement
        self.index = index
        self.parent = parent
        self.depth = depth
        self.path = path
        self.site = f'L{node.lineno}'
        self.var = node.target.id if isinstance(node.target, ast.Name) else None
        self.kind = 'other'
        self.args = []
        it = node.iter
        if isinstance(it, ast.Call):
            name = src.call_name(it)
            if name == 'range':
                self.kind = 'range'
            elif name and name.startswith('nl.') and name[3:] in RANGE_KINDS:
                self.kind = name[3:]
            self.args = list(it.args)

    @property
    def affine(self):
        return self.kind in ('affine_range', 'sequential_range', 'static_range', 'range')

    def trip(self):
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

    def describe(self):
        trip = self.trip()
        trip_text = ast.unparse(trip) if trip is not None else ast.unparse(self.node.iter)
        return f'{self.src.filename}:{self.node.lineno} loop over {self.var} ({self.kind}, {trip_text} iterations)'


def _const(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


# ----- names -----
def names_read(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_bound(stmts):
    """Names (re)bound by a list of statements, including loop variables of nested loops."""
    out = set()
    for stmt in stmts:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


def names_mutated(stmts):
    """Names whose contents are written through a subscript (`x[...] = v`, `x[...] += v`)."""
    out = set()
    for stmt in stmts:
        for n in ast.walk(stmt):
            targets = []
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


def subscript_base(node):
    while isinstance(node, ast.Subscript):
        node = node.value
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def substitute(node, mapping):
    """A copy of node with Name loads replaced by expressions (mapping: name -> ast.expr)."""
    class Sub(ast.NodeTransformer):
        def visit_Name(self, n):
            if isinstance(n.ctx, ast.Load) and n.id in mapping:
                return copy.deepcopy(mapping[n.id])
            return n
    return Sub().visit(copy.deepcopy(node))


def rename(node, old, new):
    """Rename a name everywhere (loads and stores) in a copy of node."""
    class Ren(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id == old:
                return ast.copy_location(ast.Name(id=new, ctx=n.ctx), n)
            return n
    return Ren().visit(copy.deepcopy(node))


def fresh_name(src, base):
    used = {n.id for n in ast.walk(src.module) if isinstance(n, ast.Name)} | \
           {a.arg for a in ast.walk(src.module) if isinstance(a, ast.arg)}
    if base not in used:
        return base
    i = 2
    while f'{base}{i}' in used:
        i += 1
    return f'{base}{i}'


# ----- linear forms -----
class Linear:
    """c + sum(coef * term): terms are names or opaque sub-expressions keyed by their source text."""

    def __init__(self, terms=None, const=0, exprs=None):
        self.terms = dict(terms or {})
        self.const = const
        self.exprs = dict(exprs or {})   # key -> ast for opaque terms

    def add(self, other, sign=1):
        out = Linear(self.terms, self.const, self.exprs)
        for k, v in other.terms.items():
            out.terms[k] = out.terms.get(k, 0) + sign * v
            if out.terms[k] == 0:
                del out.terms[k]
        out.exprs.update(other.exprs)
        out.const += sign * other.const
        return out

    def scale(self, f):
        return Linear({k: v * f for k, v in self.terms.items() if v * f}, self.const * f, self.exprs)

    def coef(self, name):
        return self.terms.get(name, 0)

    def without(self, name):
        out = Linear(self.terms, self.const, self.exprs)
        out.terms.pop(name, None)
        return out

    def is_const(self):
        return not self.terms

    def to_ast(self):
        parts = []
        for key in sorted(self.terms, key=lambda k: (k not in self.exprs, k)):
            coef = self.terms[key]
            term = copy.deepcopy(self.exprs[key]) if key in self.exprs else ast.Name(id=key, ctx=ast.Load())
            if coef == 1:
                expr = term
            elif coef == -1:
                expr = ast.UnaryOp(op=ast.USub(), operand=term)
            else:
                expr = ast.BinOp(left=term, op=ast.Mult(), right=ast.Constant(coef))
            parts.append(expr)
        if self.const or not parts:
            parts.append(ast.Constant(self.const))
        out = parts[0]
        for p in parts[1:]:
            if isinstance(p, ast.Constant) and p.value < 0:
                out = ast.BinOp(left=out, op=ast.Sub(), right=ast.Constant(-p.value))
            else:
                out = ast.BinOp(left=out, op=ast.Add(), right=p)
        return out


def linear(node):
    """Linear form of an integer index expression; opaque (non-linear) parts become terms of their own."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return Linear(const=node.value)
    if isinstance(node, ast.Name):
        return Linear({node.id: 1})
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return linear(node.operand).scale(-1)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.Add, ast.Sub)):
            return linear(node.left).add(linear(node.right), 1 if isinstance(node.op, ast.Add) else -1)
        if isinstance(node.op, ast.Mult):
            left, right = linear(node.left), linear(node.right)
            if right.is_const():
                return left.scale(right.const)
            if left.is_const():
                return right.scale(left.const)
    key = ast.unparse(node)
    return Linear({key: 1}, exprs={key: node})


def index_components(subscript):
    """The components of a subscript's index (a tuple index is split)."""
    sl = subscript.slice
    if isinstance(sl, ast.Tuple):
        return list(sl.elts)
    return [sl]


def make_index(elts):
    if len(elts) == 1:
        return elts[0]
    return ast.Tuple(elts=elts, ctx=ast.Load())


def slice_node(lower, upper):
    return ast.Slice(lower=lower, upper=upper, step=None)


def full_slice():
    return ast.Slice(lower=None, upper=None, step=None)


def snippet(nodes):
    if not isinstance(nodes, list):
        nodes = [nodes]
    return '\n'.join(ast.unparse(n) for n in nodes)
