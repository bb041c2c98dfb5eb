"""The modules a kernel imports, as the kernel sees them: NKI's, numpy's and the other allowed modules behind a
KernelModule view, which hands out every attribute of its module except a module the kernel could not import.

The static rules check names; they cannot see that `np.core.numeric.operator` is the host's `operator` module
(whose `attrgetter('__globals__')` reads what the private-attribute rule forbids), that `np.compat.py3k.pickle` is
pickle, or that `np.compat.npy_load_module` runs a Python file the kernel wrote as a module. A view makes every
module-valued attribute another view, or refuses it: one outside the allowed packages, or one of numpy's own
modules that exist to reach the host (HOST_NUMPY_MODULES). Everything else (functions, classes, constants) is the
module's own object, so `np.float32`, `nl.load` and `nki.jit` are what they were.
"""
import sys
import types
from typing import Any, Dict

from .static_rules import ALLOWED_MODULES, MODULE_NAMES, STAND_IN_MODULES

# The packages a kernel may import whole (static_rules: ALLOWED_MODULES, MODULE_NAMES; a stand-in module such as os
# is never the host's) as their modules are named at run time: `neuronxcc.nki` and `nki` are the simulator's nki_sim
# modules.
KERNEL_PACKAGES = frozenset({name.split('.')[0] for name in ALLOWED_MODULES} | set(MODULE_NAMES) - STAND_IN_MODULES
                            | {'nki_sim'})

# numpy's modules for the host, never for a kernel: Python 2 compatibility (pickle, npy_load_module), the build
# system, the Fortran wrapper generator and ctypes.
HOST_NUMPY_MODULES = frozenset({'numpy.compat', 'numpy.distutils', 'numpy.f2py', 'numpy.ctypeslib'})
# Modules a kernel may use some names of (those starting with a listed prefix): numpy.testing's assert functions
# (the nki.simulate Quick Start checks its result with np.testing.assert_allclose at module level), not its
# `measure` (which evaluates a string in the caller's globals), `rundocs`, test runners or C-extension builder.
LIMITED_MODULES = {'numpy.testing': ('assert',)}


class UnreachableModule(ImportError):
    """A module a kernel may not reach. Not an AttributeError: on one, `from numpy import compat` would fall back
    to sys.modules['numpy.compat'], the module itself."""


_VIEWS: Dict[int, 'KernelModule'] = {}      # id(module) -> its view; the views keep their modules alive


class KernelModule(types.ModuleType):
    """A kernel's view of one allowed module (see the module docstring)."""

    def __init__(self, module: types.ModuleType) -> None:
        super().__init__(module.__name__, module.__doc__)
        self._module = module
        self._own = frozenset(vars(self)) | {'_own'}    # the names above; the rest is what __getattr__ kept

    def forget(self) -> None:
        """Drop the attributes read so far."""
        own = vars(self)['_own']
        for name in [name for name in vars(self) if name not in own]:
            del vars(self)[name]

    def __getattr__(self, name: str) -> Any:
        module = vars(self)['_module']
        allowed = LIMITED_MODULES.get(module.__name__)
        if allowed is not None and not name.startswith(allowed):
            raise UnreachableModule(f'NKI kernels may use only the names of module {module.__name__!r} that start '
                                    f'with {" or ".join(map(repr, allowed))}, not {name!r}')
        try:
            value = getattr(module, name)
        except AttributeError:
            # a submodule that only sys.modules holds (`from neuronxcc.nki.isa import constants`)
            value = sys.modules.get(f'{module.__name__}.{name}')
            if value is None:
                raise
        if isinstance(value, types.ModuleType):
            value = kernel_module(value, f'{self.__name__}.{name}')
        # kept, so that the next read is a plain module attribute (a kernel's loop reads `nl.load` once per
        # instruction) until the next kernel is loaded (fresh_views)
        vars(self)[name] = value
        return value

    def __getitem__(self, item: Any) -> Any:
        """`nki.tensor[...]`: a module whose type is subscriptable stays so."""
        module = vars(self)['_module']
        getitem = getattr(type(module), '__getitem__', None)
        if getitem is None:
            raise TypeError(f'module {self.__name__!r} is not subscriptable')
        return getitem(module, item)


def fresh_views() -> None:
    """Forget what every view has read: the simulator rebinds its API functions while it records a program
    (nki_sim/program.py, Recording, which wraps them before the kernel is loaded and restores them after it ran), so
    a kernel loaded now must read the functions of now."""
    for view in _VIEWS.values():
        view.forget()


def kernel_module(module: types.ModuleType, reached_as: str = '') -> types.ModuleType:
    """The kernel's view of `module` (reached as `reached_as`, for the message); UnreachableModule when a kernel may
    not have it."""
    if isinstance(module, KernelModule):
        return module
    name = getattr(module, '__name__', '') or ''
    through = f' (reached as {reached_as})' if reached_as and reached_as != name else ''
    if name.split('.')[0] not in KERNEL_PACKAGES:
        raise UnreachableModule(f'NKI kernels cannot use module {name!r}{through}: a kernel imports only NKI, numpy, '
                                'math, functools and itertools')
    if name in HOST_NUMPY_MODULES or name.startswith(tuple(m + '.' for m in HOST_NUMPY_MODULES)):
        raise UnreachableModule(f'NKI kernels cannot use module {name!r}{through}: it is numpy\'s access to the host '
                                '(files, pickle, module loading, C extensions)')
    view = _VIEWS.get(id(module))
    if view is None:
        view = _VIEWS[id(module)] = KernelModule(module)
    return view
