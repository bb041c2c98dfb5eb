"""Constant folding of kernel expressions without evaluating kernel text.

`fold(node, env)` walks a syntax tree over an explicit whitelist: int / float / bool constants, names bound in
`env`, the arithmetic operators + - * / // % ** << >> & | ^, unary - + ~ not, comparisons, `and` / `or` and
`a if c else b`. Anything else (attribute access, calls, subscripts, lambdas, comprehensions, strings, ...) is
not constant. The work is bounded: at most MAX_NODES nodes are visited, integers stay within MAX_INT_BITS bits,
exponents and shift counts are checked before they are computed. Nothing from the kernel is ever executed.
"""
import ast
import math
import operator
from typing import Callable, Dict, Mapping, Optional, Union

Number = Union[int, float, bool]

MAX_NODES = 256
MAX_INT_BITS = 64
MAX_SHIFT = MAX_INT_BITS


class NotConstant(Exception):
    """The expression is not a constant this evaluator folds; the message says why."""


def _check(value: Number) -> Number:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise NotConstant(f'integer beyond {MAX_INT_BITS} bits')
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotConstant('float overflow or NaN')
        return value
    raise NotConstant(f'{type(value).__name__} is not a number')


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(exponent, int) and not isinstance(base, float):
        if exponent < 0:
            return _check(float(base) ** exponent)
        if abs(base) > 1 and (abs(int(base)).bit_length() - 1) * exponent > MAX_INT_BITS:
            raise NotConstant('power too large')
        return _check(base ** exponent)
    result = base ** exponent
    if isinstance(result, complex):
        raise NotConstant('complex power')
    return _check(result)


def _shift_left(value: Number, count: Number) -> Number:
    if isinstance(count, int) and count > MAX_SHIFT:
        raise NotConstant('shift too large')
    return _check(operator.lshift(value, count))


_BINARY: Dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _power, ast.LShift: _shift_left,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_UNARY: Dict[type, Callable[..., Number]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_,
}
_COMPARE: Dict[type, Callable[[Number, Number], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


class _Folder:
    def __init__(self, env: Mapping[str, object]) -> None:
        self.env = env
        self.budget = MAX_NODES

    def value(self, node: ast.AST) -> Number:
        self.budget -= 1
        if self.budget < 0:
            raise NotConstant(f'expression larger than {MAX_NODES} nodes')
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float)):  # bool is an int
                raise NotConstant(f'{type(node.value).__name__} constant')
            return _check(node.value)
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise NotConstant(f'{node.id} is not bound')
            bound = self.env[node.id]
            if not isinstance(bound, (int, float)):
                raise NotConstant(f'{node.id} is not bound to a number')
            return _check(bound)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.value(node.left), self.value(node.right)
            return self._apply(_BINARY[type(node.op)], left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return self._apply(_UNARY[type(node.op)], self.value(node.operand))
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            left = self.value(node.left)
            for op, comparator in zip(node.ops, node.comparators):
                right = self.value(comparator)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            result = self.value(node.values[0])
            for operand in node.values[1:]:
                if bool(result) != isinstance(node.op, ast.And):
                    return result
                result = self.value(operand)
            return result
        if isinstance(node, ast.IfExp):
            return self.value(node.body) if self.value(node.test) else self.value(node.orelse)
        raise NotConstant(f'{type(node).__name__} is not foldable')

    @staticmethod
    def _apply(op: Callable[..., Number], *args: Number) -> Number:
        try:
            return _check(op(*args))
        except (ArithmeticError, ValueError, TypeError) as e:
            raise NotConstant(f'{type(e).__name__}: {e}') from None


def fold(node: ast.AST, env: Optional[Mapping[str, object]] = None) -> Number:
    """The value of a constant expression; raises NotConstant for anything outside the whitelist."""
    return _Folder(env or {}).value(node)


def const_int(node: ast.AST, env: Optional[Mapping[str, object]] = None) -> Optional[int]:
    """The integer value of an expression of constants (and names bound in env), else None (bools are not ints)."""
    try:
        value = fold(node, env)
    except NotConstant:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None
