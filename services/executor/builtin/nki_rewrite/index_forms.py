"""Index expressions: linear (affine) forms and the components of subscripts.

`linear(node)` decides whether an index expression is affine in the loop variables (`k * 128 + j * 32 + 5` is
`{k: 128, j: 32} + 5`); anything non-linear becomes an opaque term of its own.
"""
import ast
import copy
from typing import Dict, List, Optional

class Linear:
    """c + sum(coef * term): terms are names or opaque sub-expressions keyed by their source text."""

    def __init__(self, terms: Optional[Dict[str, int]] = None, const: int = 0,
                 exprs: Optional[Dict[str, ast.expr]] = None) -> None:
        self.terms: Dict[str, int] = dict(terms or {})
        self.const = const
        self.exprs: Dict[str, ast.expr] = dict(exprs or {})   # key -> ast for opaque terms

    def add(self, other: 'Linear', sign: int = 1) -> 'Linear':
        """self + sign * other."""
        out = Linear(self.terms, self.const, self.exprs)
        for k, v in other.terms.items():
            out.terms[k] = out.terms.get(k, 0) + sign * v
            if out.terms[k] == 0:
                del out.terms[k]
        out.exprs.update(other.exprs)
        out.const += sign * other.const
        return out

    def scale(self, f: int) -> 'Linear':
        return Linear({k: v * f for k, v in self.terms.items() if v * f}, self.const * f, self.exprs)

    def coef(self, name: str) -> int:
        return self.terms.get(name, 0)

    def without(self, name: str) -> 'Linear':
        """The form with the term of name dropped."""
        out = Linear(self.terms, self.const, self.exprs)
        out.terms.pop(name, None)
        return out

    def is_const(self) -> bool:
        return not self.terms

    def to_ast(self) -> ast.expr:
        """An expression for the form: opaque terms first, then names, then the constant."""
        parts: List[ast.expr] = []
        for key in sorted(self.terms, key=lambda k: (k not in self.exprs, k)):
            coef = self.terms[key]
            term = copy.deepcopy(self.exprs[key]) if key in self.exprs else ast.Name(id=key, ctx=ast.Load())
            expr: ast.expr
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


def linear(node: ast.expr) -> Linear:
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


def index_components(subscript: ast.Subscript) -> List[ast.expr]:
    """The components of a subscript's index (a tuple index is split)."""
    sl = subscript.slice
    if isinstance(sl, ast.Tuple):
        return list(sl.elts)
    return [sl]


def make_index(elts: List[ast.expr]) -> ast.expr:
    """The index of a subscript from its components (a tuple when there are several)."""
    if len(elts) == 1:
        return elts[0]
    return ast.Tuple(elts=elts, ctx=ast.Load())


def slice_node(lower: Optional[ast.expr], upper: Optional[ast.expr]) -> ast.Slice:
    return ast.Slice(lower=lower, upper=upper, step=None)


def full_slice() -> ast.Slice:
    return ast.Slice(lower=None, upper=None, step=None)
