"""What every transformation is: an id, its candidate sites in a kernel, and `apply` at one site.

`apply` either rewrites the kernel's syntax tree in place and returns an `Applied`, or raises RewriteError with
the precise reason the transformation does not apply there. Sites are `L<line>` (a loop, by the line of its
`for`) or `S<line>` (a statement).
"""
from typing import Any, Dict, List, Optional

from ..kernel_ast import KernelSource

Params = Dict[str, Any]


class Candidate:
    """A site where a transformation applies, with the parameters it would use there."""

    def __init__(self, transformation: str, site: str, description: str, params: Optional[Params] = None,
                 source_engine: str = '') -> None:
        self.transformation = transformation
        self.site = site
        self.description = description
        self.params: Params = params or {}
        # move_elementwise_engine: the engine the work runs on now ('vector', 'scalar', 'gpsimd', or 'auto' when
        # the compiler picks between ScalarE and VectorE)
        self.source_engine = source_engine

    def to_json(self) -> Dict[str, Any]:
        out = {'transformation': self.transformation, 'site': self.site, 'description': self.description,
               'params': self.params}
        if self.source_engine:
            out['source_engine'] = self.source_engine
        return out


class Applied:
    """The outcome of one rewrite: a sentence and the code before and after."""

    def __init__(self, description: str, before: str, after: str) -> None:
        self.description = description
        self.before = before
        self.after = after


class Transformation:
    id = ''
    summary = ''
    site_kind = 'S'
    params_doc: Dict[str, str] = {}

    def candidates(self, src: KernelSource) -> List[Candidate]:
        """Every site of the kernel where the transformation applies (with default parameters)."""
        raise NotImplementedError

    def apply(self, src: KernelSource, site: str, params: Params) -> Applied:
        """Rewrites src at site, or raises RewriteError with the reason it does not apply there."""
        raise NotImplementedError
