"""A `return` that ends the body of an `nl.affine_range` / `nl.sequential_range` loop in a Beta 1 (neuronxcc) kernel.

NKI traces the body of such a loop once, with a symbolic loop index, and the compiler emits the loop over all its
iterations; a `return` written as the last statement of the body therefore returns after the whole loop (the NKI
documentation's own examples do this: `for p in nl.affine_range(n): ...; return out_tensor`). The simulator runs
loops in Python, where that `return` would end the kernel after iteration 0. The loader moves such a `return` to
just after its loop (innermost loops first, so a return that then ends an enclosing traced loop moves again)
before the module runs. Beta 2 (`import nki`) kernels are left alone: there `affine_range` is an alias of range
and the loop is unrolled in Python. Only a `return` that is the body's last statement is moved; the rest of the
kernel, and every line number, stays as written."""
import ast

TRACED_LOOPS = frozenset({'affine_range', 'sequential_range'})
_STATEMENT_LISTS = ('body', 'orelse', 'finalbody')


def _traced_loop(node):
    if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call) or node.orelse:
        return False
    func = node.iter.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ''
    return name in TRACED_LOOPS


def _hoisted(statements, moved):
    out = []
    for statement in statements:
        _hoist_within(statement, moved)
        out.append(statement)
        if _traced_loop(statement) and isinstance(statement.body[-1], ast.Return):
            returned = statement.body.pop()
            if not statement.body:
                statement.body.append(ast.copy_location(ast.Pass(), returned))
            moved.append(returned.lineno)
            out.append(returned)
    return out


def _hoist_within(node, moved):
    for field in _STATEMENT_LISTS:
        statements = getattr(node, field, None)
        if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
            setattr(node, field, _hoisted(statements, moved))
    for handler in getattr(node, 'handlers', ()) or ():
        _hoist_within(handler, moved)
    for case in getattr(node, 'cases', ()) or ():
        _hoist_within(case, moved)


def hoist_loop_returns(tree):
    """Move returns that end traced loop bodies after their loops, in place; the lines of the moved returns."""
    moved = []
    _hoist_within(tree, moved)
    if moved:
        ast.fix_missing_locations(tree)
    return moved
