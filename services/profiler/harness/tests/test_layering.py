"""nki_sim's import graph: layered, acyclic, and every import at module level (none inside a function)."""
import ast
import os
import unittest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'nki_sim')


def _modules():
    return sorted(name[:-3] for name in os.listdir(PACKAGE) if name.endswith('.py'))


def _parse(module):
    with open(os.path.join(PACKAGE, module + '.py')) as f:
        return ast.parse(f.read(), module + '.py')


def _imported_siblings(node, known):
    """nki_sim modules a (relative) import statement names."""
    if isinstance(node, ast.ImportFrom) and node.level == 1:
        if node.module:
            return {node.module.split('.')[0]} & known
        return {alias.name for alias in node.names} & known
    if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith('nki_sim.'):
        return {node.module.split('.')[1]} & known
    if isinstance(node, ast.Import):
        return {a.name.split('.')[1] for a in node.names if a.name.startswith('nki_sim.')} & known
    return set()


def import_graph():
    known = set(_modules())
    return {module: set().union(*[_imported_siblings(node, known) for node in ast.walk(_parse(module))])
            for module in known}


def nested_imports():
    """(module, line) of every import statement inside a function or class body."""
    found = []
    for module in _modules():
        for scope in ast.walk(_parse(module)):
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                for node in ast.walk(scope):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        found.append((module, node.lineno))
    return found


def find_cycle(graph):
    """One import cycle as a list of modules, or None."""
    state = {}
    stack = []

    def visit(module):
        state[module] = 'open'
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 'open':
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[module] = 'done'
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


# Layers, lowest first: a module may import only modules of its own or a lower layer.
LAYERS = (
    {'errors', 'dtypes', 'affine', 'memory', 'allocator', 'ops', 'tile_ops', 'target', 'beta'},  # core data types
    {'views', 'indirect', 'tensors', 'placement', 'races'},                        # memory and views
    {'trace'},                                                                     # instruction records
    {'runtime', 'loops', 'operands', 'compute', 'call_forms'},                     # execution
    {'isa_select', 'isa_topk', 'isa', 'language'},                                 # NKI API
    {'jit', 'surface', '__init__', 'program'},                                     # entry points, programs
)


class LayeringTest(unittest.TestCase):
    def test_checker_finds_a_cycle(self):
        self.assertEqual(find_cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}), ['a', 'b', 'c', 'a'])
        self.assertIsNone(find_cycle({'a': {'b'}, 'b': set()}))

    def test_import_graph_is_acyclic(self):
        self.assertIsNone(find_cycle(import_graph()))

    def test_no_import_inside_a_function(self):
        self.assertEqual(nested_imports(), [])

    def test_every_module_has_a_layer_and_imports_only_downwards(self):
        layer_of = {module: level for level, modules in enumerate(LAYERS) for module in modules}
        graph = import_graph()
        self.assertEqual(sorted(set(graph) - set(layer_of)), [], 'modules without a layer')
        upward = [(module, target) for module, targets in graph.items() for target in targets
                  if layer_of[target] > layer_of[module]]
        self.assertEqual(upward, [])


if __name__ == '__main__':
    unittest.main()
