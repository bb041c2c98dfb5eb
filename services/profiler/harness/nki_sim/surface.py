"""The `neuronxcc.nki` / `nki` package surface built from nki_sim: entry points and registered submodules, so
`import neuronxcc.nki.language as nl` returns nki_sim.language itself."""
import contextlib
import sys
import types
from typing import Any

import numpy as np

from . import isa, jit, language
from .dtypes import kind_of
from .errors import UnsupportedApi
from .memory import Buffer
from .tensors import Tensor


class _TypingModule(types.ModuleType):
    tensor = Tensor


class _TensorModule(types.ModuleType):
    """`nki.tensor` of NKI 0.3+: trace-time constants for nl.shared_constant (numpy arrays here); subscripting it
    gives the tensor annotation type, as `nki.tensor[...]` did."""

    def __getitem__(self, item: Any) -> Any:
        return Tensor.__class_getitem__(item)

    @staticmethod
    def zeros(shape: Any, dtype: Any = np.float32) -> np.ndarray:
        return np.zeros(shape, dtype=kind_of(dtype).storage)

    @staticmethod
    def identity(n: int, dtype: Any = np.float32) -> np.ndarray:
        return np.identity(n, dtype=kind_of(dtype).storage)

    @staticmethod
    def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = np.float32) -> np.ndarray:
        return np.arange(start, stop, step).astype(kind_of(dtype).storage)


class _Allocation:
    """nki.compiler.sbuf / psum: direct allocation requests are accepted and placed like automatic ones."""

    def __init__(self, buffer):
        self.buffer = buffer

    def mod_alloc(self, *args: Any, **kwargs: Any) -> Buffer:
        return self.buffer

    def alloc(self, *args: Any, **kwargs: Any) -> Buffer:
        return self.buffer

    auto_alloc = alloc


class _CollectivesModule(types.ModuleType):
    """`nki.collectives`: communication between ranks (all-gather, collective permutes, ...) is not modelled (one
    NeuronCore runs, or two sharing HBM); every name is refused, naming the cause."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith('__'):
            raise AttributeError(name)
        raise UnsupportedApi(f'{self.__name__}.{name} is not supported by the simulator: collectives '
                             '(communication between ranks or devices) are not modelled')


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
    collectives = _CollectivesModule(name + '.collectives')
    for short, module in (('language', language), ('isa', isa), ('typing', typing), ('compiler', compiler),
                          ('collectives', collectives)):
        setattr(package, short, module)
        sys.modules[f'{name}.{short}'] = module
    if name == 'nki':           # NKI 0.3+: `import nki.tensor as ntensor` is a module of constant builders
        tensor = _TensorModule(name + '.tensor')
        setattr(package, 'tensor', tensor)
        sys.modules[name + '.tensor'] = tensor
    else:
        setattr(package, 'tensor', Tensor)
