"""Which names of a kernel are tiles, which are PSUM tiles and which are scalars (best effort)."""
import ast
from typing import Optional, Set

from ..kernel_ast import KernelSource, names_read, subscript_base
from .common import call_arg

PSUM_PRODUCERS = ('nisa.nc_matmul', 'nisa.nc_transpose', 'nl.matmul')


class OperandKinds:
    def __init__(self, src: KernelSource) -> None:
        self.src = src
        self.tiles: Set[str] = set()
        self.psum: Set[str] = set()
        params = [a.arg for a in src.func.args.args]
        subscripted = {subscript_base(n) for n in ast.walk(src.func) if isinstance(n, ast.Subscript)}
        self.tiles |= {p for p in params if p in subscripted}
        self.scalars = {p for p in params if p not in subscripted}
        for node in ast.walk(src.func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self._classify(node.targets[0].id, node.value)

    def _classify(self, name: str, value: ast.expr) -> None:
        call = self.src.call_name(value)
        if isinstance(value, ast.Call) and call and (call.startswith('nl.') or call.startswith('nisa.')):
            self.tiles.add(name)
            buffer = call_arg(value, None, 'buffer')
            if call in PSUM_PRODUCERS or (buffer is not None and ast.unparse(buffer).endswith('psum')):
                self.psum.add(name)
        elif isinstance(value, ast.Subscript) and subscript_base(value) in self.tiles:
            self.tiles.add(name)
            if subscript_base(value) in self.psum:
                self.psum.add(name)
        elif not (names_read(value) & self.tiles) and not isinstance(value, ast.Call):
            self.scalars.add(name)

    def kind(self, node: ast.expr) -> Optional[str]:
        """'tile', 'psum' or 'scalar' for an operand expression, or None when unknown."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return 'scalar'
        base = subscript_base(node) if isinstance(node, (ast.Subscript, ast.Name)) else None
        if base in self.tiles:
            return 'psum' if base in self.psum else 'tile'
        name = self.src.call_name(node)
        if isinstance(node, ast.Call) and name and name.split('.')[0] in ('nl', 'nisa'):
            return 'psum' if name in PSUM_PRODUCERS else 'tile'
        used = names_read(node)
        if used and used <= self.scalars or not used and isinstance(node, (ast.BinOp, ast.UnaryOp)):
            return 'scalar'
        return None
