"""The `neuronxcc.nki` / `nki` package surface built from nki_sim: entry points and registered submodules, so
`import neuronxcc.nki.language as nl` returns nki_sim.language itself."""
import contextlib
import sys
import types
from typing import Any

import numpy as np

from . import isa, jit, language, placement
from .dtypes import kind_of
from .errors import CompileError
from .memory import Buffer
from .tensors import Tensor


def _dynamic_scalar(*args: Any, **kwargs: Any) -> Any:
    raise CompileError('nki.typing.scalar (a value read from device memory to steer control flow, as in '
                       '`while scalar(cond):`) is not supported by the simulator: data-dependent (dynamic) control flow '
                       'is not modelled')


class _Mutable:
    """`nki.typing.mutable`: the marker of `nt.tensor[nt.mutable]`, an argument the kernel writes in place (the
    compiler's experimental flag enable-mutable-parameter). Annotations only: every HBM argument of the simulator
    is writable already, and a kernel may return it."""


class _TypingModule(types.ModuleType):
    """`nki.typing`: `tensor` is the simulator's tensor type; `mutable` the in-place argument marker;
    `mutable_tensor` the type of an output argument the kernel writes (the NKI Library API pages type such
    parameters ``nt.mutable_tensor``, e.g. router_topk's router_logits), an annotation like `tensor`, since every HBM
    argument is writable here; `scalar` (dynamic control flow) can be imported, so that the other kernels of a
    module that uses it still run, and is refused where it is used."""
    tensor = Tensor
    mutable = _Mutable
    mutable_tensor = Tensor
    scalar = staticmethod(_dynamic_scalar)


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
    """nki.compiler.sbuf / psum: a direct allocation request is a Placement (nki_sim/placement.py); auto_alloc is
    the memory itself."""

    def __init__(self, buffer):
        self.buffer = buffer

    def mod_alloc(self, *args: Any, **kwargs: Any) -> placement.Placement:
        if self.buffer is language.psum:
            return placement.psum_mod_alloc(*args, **kwargs)
        return placement.sbuf_mod_alloc(*args, **kwargs)

    def alloc(self, func: Any) -> placement.Placement:
        return placement.custom_alloc(self.buffer, func)

    def auto_alloc(self, *args: Any, **kwargs: Any) -> Buffer:
        return self.buffer


def _compiler_hint(*args: Any, **kwargs: Any) -> Any:
    """A compilation hint decorator (`nki.compiler.enable_stack_allocator`, ...) with or without arguments: the
    decorated kernel is returned unchanged (`@hint` and `@hint(...)` both)."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return args[0]
    return lambda func: func


def _compiler_module(name):
    module = types.ModuleType(name)
    module.sbuf = _Allocation(language.sbuf)
    module.psum = _Allocation(language.psum)
    module.skip_middle_end_transformations = _compiler_hint
    module.enable_stack_allocator = _compiler_hint
    module.force_auto_alloc = _compiler_hint
    module.no_reorder = contextlib.nullcontext
    module.multi_buffer = lambda count: ('multi_buffer', count)      # loop directives: scheduling hints only
    module.tile_position = lambda *args, **kwargs: ('tile_position', args)
    return module


def sizeinbytes(dtype: Any) -> int:
    """`nki.language.constants.sizeinbytes(dtype)`: the element size of an NKI dtype (bfloat16 2, fp8 1), not of
    the float32 storage the simulator keeps low-precision data in."""
    return int(kind_of(dtype).itemsize)


class _DTypeMeta(type):
    def __instancecheck__(cls, value: Any) -> bool:
        if not isinstance(value, (type, np.dtype)):
            return False
        try:
            kind_of(value)
        except (TypeError, ValueError, CompileError):
            return False
        return True


class DType(metaclass=_DTypeMeta):
    """`nki.dtype`, the type of NKI data types (nl.float32, nl.bfloat16, ...), as the NKI Library annotates its
    dtype parameters (`dtype: nki.dtype = nl.bfloat16`); `isinstance(nl.float32, nki.dtype)` holds."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise CompileError('nki.dtype is the type of NKI data types (an annotation); name one as nl.float32, ...')


class _CollectivesModule(types.ModuleType):
    """`nki.collectives`, `nki.nccl` (and `nki.nccl.collectives`): collectives between NeuronCores are not
    modelled; naming any of them is a CompileError that says so (not an AttributeError, which `from ... import`
    would turn into a misleading ImportError)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith('__'):
            raise AttributeError(name)
        raise CompileError(f'{self.__name__}.{name} is not supported by the simulator: collectives (all_reduce, '
                           'all_gather, collective_permute, ...) are not modelled')


def _language_constants_module(name):
    module = types.ModuleType(name)
    module.sizeinbytes = sizeinbytes
    return module


def _isa_constants_module(name: str) -> types.ModuleType:
    """`nki.isa.constants` / `neuronxcc.nki.isa.constants`, where NKI defines the nisa enumerations (`from nki.isa
    import constants`, then `constants.dge_mode.hwdge`; `from neuronxcc.nki.isa.constants import oob_mode`, the
    neuronx-distributed-inference paged-cache loads): the same classes nisa exposes. Any other name is the
    not-implemented error of nisa."""
    module = types.ModuleType(name)
    for enum in ('dge_mode', 'oob_mode', 'engine', 'reduce_cmd', 'nc_version', 'matmul_perf_mode'):
        setattr(module, enum, getattr(isa, enum))

    def __getattr__(attribute: str) -> Any:
        if attribute.startswith('__'):
            raise AttributeError(attribute)
        return getattr(isa, attribute)
    setattr(module, '__getattr__', __getattr__)
    return module


def populate(package: types.ModuleType) -> None:
    """Give `package` (neuronxcc.nki or nki) the NKI entry points and submodules."""
    name = package.__name__
    for attribute in ('jit', 'trace', 'baremetal', 'benchmark', 'profile', 'simulate_kernel'):
        setattr(package, attribute, getattr(jit, attribute))
    typing = _TypingModule(name + '.typing')
    compiler = _compiler_module(name + '.compiler')
    collectives = _CollectivesModule(name + '.collectives')
    for short, module in (('language', language), ('isa', isa), ('typing', typing), ('compiler', compiler),
                          ('collectives', collectives)):
        setattr(package, short, module)
        sys.modules[f'{name}.{short}'] = module
    sys.modules[f'{name}.language.constants'] = _language_constants_module(f'{name}.language.constants')
    isa_constants = _isa_constants_module(f'{name}.isa.constants')
    setattr(isa, 'constants', isa_constants)
    sys.modules[f'{name}.isa.constants'] = isa_constants
    nccl = _CollectivesModule(f'{name}.nccl')
    setattr(package, 'nccl', nccl)
    sys.modules[f'{name}.nccl'] = nccl
    sys.modules[f'{name}.nccl.collectives'] = _CollectivesModule(f'{name}.nccl.collectives')
    if name == 'nki':           # NKI 0.7: the per-kernel config objects of `@nki.jit(compile_config=...)`
        for config in (jit.CompileConfig, jit.SpecializationConfig, jit.AddressRotation):
            setattr(compiler, config.__name__, config)
    if name == 'nki':           # NKI 0.3+: `import nki.tensor as ntensor` is a module of constant builders
        setattr(package, 'simulate', jit.simulated)     # NKI 2.30+: nki.simulate(kernel)(*arrays)
        tensor = _TensorModule(name + '.tensor')
        setattr(package, 'tensor', tensor)
        sys.modules[name + '.tensor'] = tensor
        setattr(package, 'dtype', DType)
    else:
        setattr(package, 'tensor', Tensor)
