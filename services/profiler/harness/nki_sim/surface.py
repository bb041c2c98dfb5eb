"""The `neuronxcc.nki` / `nki` package surface built from nki_sim: entry points and registered submodules, so
`import neuronxcc.nki.language as nl` returns nki_sim.language itself."""
import contextlib
import sys
import types
from typing import Any

from . import isa, jit, language
from .memory import Buffer
from .tensors import Tensor


class _TypingModule(types.ModuleType):
    tensor = Tensor


class _Allocation:
    """nki.compiler.sbuf / psum: direct allocation requests are accepted and placed like automatic ones."""

    def __init__(self, buffer):
        self.buffer = buffer

    def mod_alloc(self, *args: Any, **kwargs: Any) -> Buffer:
        return self.buffer

    def alloc(self, *args: Any, **kwargs: Any) -> Buffer:
        return self.buffer

    auto_alloc = alloc


def _compiler_module(name):
    module = types.ModuleType(name)
    module.sbuf = _Allocation(language.sbuf)
    module.psum = _Allocation(language.psum)
    module.skip_middle_end_transformations = lambda func: func
    module.enable_stack_allocator = lambda *a, **k: (lambda func: func)
    module.force_auto_alloc = lambda func: func
    module.no_reorder = contextlib.nullcontext
    module.multi_buffer = lambda count: ('multi_buffer', count)      # loop directives: scheduling hints only
    module.tile_position = lambda *args, **kwargs: ('tile_position', args)
    return module


def populate(package: types.ModuleType) -> None:
    """Give `package` (neuronxcc.nki or nki) the NKI entry points and submodules."""
    name = package.__name__
    for attribute in ('jit', 'trace', 'baremetal', 'benchmark', 'simulate_kernel'):
        setattr(package, attribute, getattr(jit, attribute))
    typing = _TypingModule(name + '.typing')
    compiler = _compiler_module(name + '.compiler')
    for short, module in (('language', language), ('isa', isa), ('typing', typing), ('compiler', compiler)):
        setattr(package, short, module)
        sys.modules[f'{name}.{short}'] = module
    setattr(package, 'tensor', Tensor)
