"""The entry point of a kernel module: its `kernel` (else `optimized_kernel`), or, for a kernel file as published,
the one function that launches one of its NKI kernels on a grid (`nki_add[grid_x, grid_y](a, b)`), else its one NKI
kernel that no other of its kernels calls. A function using a host framework (a torch runner) is host code, never
the entry point."""
import ast

from nki_sim.jit import Kernel

from . import host_frameworks

ENTRY_POINTS = ('kernel', 'optimized_kernel')


def entry_point(module, tree):
    """(the callable to run, '') or (None, why none was chosen, to follow "defines neither ...")."""
    for name in ENTRY_POINTS:
        entry = wrapped_kernel(getattr(module, name, None))
        if callable(entry):
            return entry, ''
    kernels = module_kernels(module)
    kernel_names = {name for name, _ in kernels}
    launchers = [(name, getattr(module, name)) for name in grid_launchers(tree, kernel_names)
                 if callable(getattr(module, name, None))]
    called = called_by_kernels(tree, kernel_names)
    candidates = launchers or [(name, k) for name, k in kernels if name not in called]
    if len(candidates) == 1:
        return candidates[0][1], ''
    if not candidates:
        return None, ' (nor one function decorated with @nki.jit)'
    listed = ', '.join(name for name, _ in candidates)
    return None, (f', and {len(candidates)} {"grid launchers" if launchers else "NKI kernels"} ({listed}): name the '
                  f'one to run with `kernel = <name>`')


def module_kernels(module):
    """(name, kernel) of the NKI kernels (@nki.jit, @nki.baremetal, ... functions) the module itself defines, each
    once, in definition order."""
    kernels, seen = [], set()
    for name, value in vars(module).items():
        value = wrapped_kernel(value)
        if isinstance(value, Kernel) and getattr(value.func, '__module__', None) == module.__name__ \
                and id(value.func) not in seen:
            seen.add(id(value.func))
            kernels.append((name, value))
    return kernels


def wrapped_kernel(value):
    """The NKI kernel a torch operator wraps (`@wrap_nki` over `@nki.jit`), else the value itself."""
    if isinstance(value, host_frameworks.HostOperator) and value.kernel is not None:
        return value.kernel
    return value


def grid_launchers(tree, kernel_names):
    """Names of the module-level functions, not NKI kernels themselves, that launch one of the module's NKI
    kernels (`kernel_names`) on a grid (`k[g0, g1](...)`) and use no host framework (a torch runner that moves its
    tensors to the device is host code, not a launcher), in definition order."""
    hosts = host_framework_names(tree)
    launchers = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name not in kernel_names and any(
                isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript)
                and isinstance(call.func.value, ast.Name) and call.func.value.id in kernel_names
                for call in ast.walk(node)) and not any(
                isinstance(name, ast.Name) and name.id in hosts for name in ast.walk(node)):
            launchers.append(node.name)
    return launchers


def host_framework_names(tree):
    """The names the module's imports of host frameworks bind (`torch`, `xm`, `F`, ...)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split('.')[0] for alias in node.names
                         if host_frameworks.is_host_framework(alias.name))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and host_frameworks.is_host_framework(node.module):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def called_by_kernels(tree, kernel_names):
    """Names of the module's NKI kernels (`kernel_names`) that another of them calls by name: sub-kernels, not entry
    points."""
    called = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in kernel_names:
            called.update(call.func.id for call in ast.walk(node) if isinstance(call, ast.Call)
                          and isinstance(call.func, ast.Name) and call.func.id in kernel_names
                          and call.func.id != node.name)
    return called
