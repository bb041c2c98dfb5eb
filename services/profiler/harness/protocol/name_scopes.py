"""Which reads of a name can reach a builtin of that name: Python's scope rules, read from the syntax tree.

A function's local names and the names it takes from an enclosing function are looked up nowhere else: such a read
never reaches a builtin (an unassigned one raises). Any other read (in a module or class body, of a name declared
`global`, of a name no enclosing function binds) looks in the module's globals and then in the builtins, so a
binding of the name elsewhere does not stop it reaching the builtin: `x = input()` before `input = ...`."""
import ast

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def names_bound(node):
    """The names `node` itself binds or declares: an assignment or deletion target, an import alias, a `def` or
    `class`, a parameter, a `global` or `nonlocal` statement, an `except ... as` or match capture."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [(node.asname or node.name).split('.')[0]]
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return [node.name]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


class _Scope:
    def __init__(self, node, parent):
        self.node = node
        self.parent = parent
        self.is_function = isinstance(node, _FUNCTIONS + _COMPREHENSIONS)
        self.bound = set()
        self.declared_global = set()
        self.declared_nonlocal = set()

    def binding_scope(self):
        """Where an assignment expression binds: the nearest scope that is not a comprehension (PEP 572)."""
        scope = self
        while isinstance(scope.node, _COMPREHENSIONS):
            scope = scope.parent
        return scope


def _parameters(args):
    """A function's parameters (`ast.arg` nodes) and its defaults, which are evaluated where it is defined."""
    parameters = args.posonlyargs + args.args + args.kwonlyargs + \
        [arg for arg in (args.vararg, args.kwarg) if arg is not None]
    return parameters, args.defaults + [default for default in args.kw_defaults if default is not None]


def _outer_and_inner(node):
    """A scope node's children evaluated in the enclosing scope, and those of its own scope."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parameters, defaults = _parameters(node.args)
        outer = node.decorator_list + defaults + \
            [arg.annotation for arg in parameters if arg.annotation is not None] + \
            ([node.returns] if node.returns is not None else [])
        return outer, parameters + node.body
    if isinstance(node, ast.Lambda):
        parameters, defaults = _parameters(node.args)
        return defaults, parameters + [node.body]
    if isinstance(node, ast.ClassDef):
        return node.decorator_list + node.bases + node.keywords, node.body
    # a comprehension: its first iterable is evaluated outside it
    first, *rest = node.generators
    results = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    return [first.iter], [first.target] + first.ifs + \
        [part for generator in rest for part in [generator.target, generator.iter] + generator.ifs] + results


def builtin_reads(tree, names):
    """The `ast.Name` loads of `names` in `tree` whose lookup can reach the builtins."""
    reads = []   # (Name node, scope)

    def visit(node, scope):
        if isinstance(node, _FUNCTIONS + _COMPREHENSIONS + (ast.ClassDef,)):
            scope.bound.update(names_bound(node))
            outer, inner = _outer_and_inner(node)
            for child in outer:
                visit(child, scope)
            own = _Scope(node, scope)
            for child in inner:
                visit(child, own)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in names:
                reads.append((node, scope))
        elif isinstance(node, ast.NamedExpr):
            scope.binding_scope().bound.add(node.target.id)
            visit(node.value, scope)
            return
        elif isinstance(node, ast.Global):
            scope.declared_global.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.declared_nonlocal.update(node.names)
        else:
            scope.bound.update(names_bound(node))
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(tree, _Scope(tree, None))
    return [node for node, scope in reads if _reaches_builtins(node.id, scope)]


def _reaches_builtins(name, scope):
    innermost = scope
    while scope.parent is not None:
        if scope.is_function:
            if name in scope.declared_global:
                return True
            if name in scope.bound and name not in scope.declared_nonlocal:
                return False
        elif scope is innermost and name in scope.bound:
            return True     # a class body's own name: the class namespace, then the globals, then the builtins
        scope = scope.parent    # a free name, or a class body's name from an enclosing function
    return True
