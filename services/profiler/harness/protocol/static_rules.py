"""NKI's static rules, checked on the kernel's syntax tree before any of it runs (as neuronxcc does): a kernel
imports only NKI, numpy and math, touches no private or dunder attribute, mutates no module, and uses none of
the introspection or dynamic-code builtins. Each violation names its rule:

- import: a module other than nki / neuronxcc.nki (and submodules) / numpy / math / functools / itertools /
  __future__ / logging (the kernel gets a stand-in that drops every message, see host_logging.py) / os for
  `os.environ`, `os.getenv` and `os.path` only (a stand-in whose environment is the kernel's own, see
  host_environment.py, and whose path functions only rewrite text, see host_paths.py) / sys for `sys.path` and
  constants only (an import path of the kernel's own, see host_sys.py) / pathlib for `Path` (a stand-in whose paths
  are text only, `Path.home()` '~', see host_paths.py) / subprocess for starting programs, which always fails as on
  a host without them (FileNotFoundError, see host_subprocess.py) / re for its matching functions and flags /
  torch, torch_xla, torch_neuronx, jax, unittest (stand-ins for host code that never runs, see
  host_frameworks.py; only torch_neuronx.nki_jit is real, the simulator's nki.jit), except `from M import name` of
  the pure helpers public kernels use (HELPER_NAMES: operator.mul, dataclasses.dataclass, typing.Tuple, ...);
  never those whole modules (operator.attrgetter reaches private
  attributes, typing.get_type_hints evaluates strings). `import warnings` is allowed for `warnings.warn` alone,
  `import pdb` (a debugging leftover in public kernels) for nothing (MODULE_NAMES: any other attribute of such a
  module is refused, statically and through getattr)
- forbidden-module: one of the host-access modules (os, sys, ctypes, subprocess, ...), imported or reached
  through an attribute (numpy.ctypeslib, ...)
- unused imports: `import M` / `import M.sub` / `import M.sub as x` / `from M import a` whose bound names appear
  nowhere else in the file
  pass whatever M is (a leftover public kernels keep: the nki-samples LoRA kernels import sys and never use it;
  an `except ImportError:` handler's `name = None` fallback of the try's import is no use, `_import_fallbacks`);
  the loader binds the names to inert stand-ins that hold nothing (kernel_source.InertModule), never the host's
  module (`unused_imports`); any use of such a name is checked by the rules above
- `__main__` blocks: the body of a module-level `if __name__ == "__main__":` (tests, benchmarks, argument parsing
  in a kernel file) is not checked and its names are no use: it never runs, since the harness imports the kernel
  file under another name, and binding `__name__` in any form is a private-attribute violation; nor is the body of
  a plain module-level function that only such blocks call (`host_only_functions`: a `parse_args()` with argparse),
  or that nothing in the file names (a torch wrapper no code calls), nor of the methods of a class whose bases are
  all host framework names and that no live code names (`host_framework_classes`: `class ConvNKI(nn.Conv1d)`),
  which the loader replaces by a `raise` before the module is compiled (`stub_host_only`)
- private-attribute: `x._name` or `x.__name__`-style access (except `__getitem__`, `__len__`, `__contains__`,
  which restate `x[i]`, `len(x)`, `in`, and `super().__init__` with the zero-argument `super()`, a method of the
  kernel's own class initialising its own instance: a torch wrapper class in the file's host code), a dunder name
  such as `__builtins__` (except the module metadata `__all__`, `__version__`, `__author__`; reading `__file__`,
  the placeholder path host_paths.KERNEL_DIRECTORY/<file name>; and `__annotations__ = {...}` assigned in a class
  body, a dataclass's field declarations), or an import from a private module
  (`neuronxcc.nki._private.private_api`). Nor may any other form bind a dunder name (an import's alias, even of
  an unused import, `except E as`, a match capture, `global`, a def or class outside a class body): a module-valued
  `__builtins__` would be the builtins of the functions defined after it (`_bound_dunder`). The kernel may read
  its own members: `x._name` where `_name` (one leading underscore) is a method, class attribute, annotated field
  or `self._name = ...` attribute of the kernel's own classes, unless that name is also a private name of the
  harness or of any loaded module or class (so that reading it on a foreign object reaches nothing new), and `x`
  is a name the kernel binds (a parameter, a local, its own class) or an attribute chain from one, not an imported
  name nor a call's result (the NKI Library's configuration classes call `self._calculate_...()`, its
  MoEBlockIOLayout enumeration has a member with a leading underscore, its MLP calls `params.quant_params.<private
  method>(params)` and reads the private fields of its dimensions dataclass). No name the harness uses may appear
  here: its sources are scanned for them
- module-mutation: assigning, augmenting or deleting an attribute of an imported module or name
- forbidden-builtin: exec, eval, compile, __import__, open, globals, locals, vars, setattr, delattr, input.
  `breakpoint` (a debugging leftover in public kernels, often in an error branch that never runs) is the kernel
  module's `no_debugger`: calling it is a RUNTIME_ERROR, the debugger is never reached
- introspection: the attributes that reach the interpreter's frames and code (a generator's `gi_frame`, then a
  frame's `f_globals`, `f_builtins`, `f_back`, ..., a Cython function's `func_globals`): a frame's globals hold the
  module's builtins and through them `__import__`, so
  `(x for x in ()).gi_frame.f_globals['__builtins__']['__import__']('os')` would import any module with no rule
  above seeing it; refused statically and through getattr
- getattr (public kernels read configuration with `getattr(nl, dtype_name)`) never reaches a private name: a
  literal name starting with `_` is a private-attribute violation here (a forbidden module's name, such as
  `getattr(np, 'ctypeslib')`, a forbidden-module one), and the kernel's module gets `public_getattr`, which
  refuses both kinds of name at run time
"""
import ast
import os
import re
import sys
import types

from . import entry_point, host_environment, host_frameworks, host_logging, host_paths, host_subprocess, host_sys
from .name_scopes import builtin_reads, names_bound

ALLOWED_MODULES = ('nki', 'neuronxcc.nki', 'numpy', 'math', 'functools', 'itertools', '__future__')
FORBIDDEN_MODULES = frozenset({
    'atexit', 'gc', 'sys', 'os', 'ctypes', 'threading', 'multiprocessing', 'subprocess', 'importlib',
    'builtins', 'inspect', 'ctypeslib', 'f2py', 'distutils', 'posix', '_thread', 'signal', 'socket'})
# Attributes of generators, coroutines, frames and tracebacks that reach frames or code objects (names without a
# leading underscore, so the private-attribute rule does not cover them); Cython's functions (numpy.random's
# SeedSequence.generate_state) spell a function's globals, code and closure the Python 2 way, and a closure cell
# holds its value in cell_contents.
INTROSPECTION_ATTRIBUTES = frozenset({
    'gi_frame', 'cr_frame', 'ag_frame', 'gi_code', 'cr_code', 'ag_code', 'gi_yieldfrom', 'cr_await', 'ag_await',
    'f_globals', 'f_locals', 'f_builtins', 'f_back', 'f_code', 'f_trace', 'tb_frame', 'tb_next',
    'func_globals', 'func_code', 'func_closure', 'func_dict', 'cell_contents'})
FORBIDDEN_BUILTINS = frozenset({
    'exec', 'eval', 'compile', '__import__', 'open', 'globals', 'locals', 'vars', 'setattr', 'delattr'})
# Names public kernels import from standard modules for host-side helpers and configuration; none reaches an
# attribute by name or evaluates code.
HELPER_NAMES = {
    'operator': frozenset({'add', 'sub', 'mul', 'truediv', 'floordiv', 'mod', 'neg', 'pow'}),
    'dataclasses': frozenset({'dataclass', 'field'}),
    'typing': frozenset({'Any', 'Callable', 'Dict', 'Iterable', 'Iterator', 'List', 'Literal', 'NamedTuple',
                         'Optional', 'Sequence', 'Set', 'Tuple', 'Type', 'TypeVar', 'Union'}),
    'enum': frozenset({'Enum', 'IntEnum'}),
    'collections': frozenset({'Counter', 'OrderedDict', 'defaultdict', 'deque', 'namedtuple'}),
    # a plain attribute bag for configurations (`SimpleNamespace(tile_m=64)`); not the module's type objects
    'types': frozenset({'SimpleNamespace'}),
    'logging': frozenset(host_logging.NAMES),
}
# Modules a kernel may import (whole, or the names above) that the loader replaces by a stand-in (never the host's
# module): logging, whose messages are dropped (and the host frameworks, host_frameworks.py).
STAND_IN_MODULES = frozenset({'logging', 'os', 'os.path', 'pathlib', 'subprocess', 'sys'})
# Modules a kernel may import whole for the names listed only (host-side diagnostics, e.g. neuronx-distributed's
# find_index.py imports warnings): `warnings.warn(...)` prints a message and reaches nothing else. A student's
# conv2d kernel imports pdb and never uses it; the debugger itself (pdb.set_trace, pdb.run) stays out of reach.
MODULE_NAMES = {'warnings': frozenset({'warn'}), 'pdb': frozenset()}
# `import os` binds a stand-in whose environment is the kernel's own (host_environment.py): public kernel files set
# compiler flags with `os.environ[...] = ...` when they are imported. Only exactly `os`: `os.path`, `os.system` and
# every other name stay forbidden-module.
MODULE_NAMES['os'] = frozenset(host_environment.NAMES)
# `os.path` is text functions alone (host_paths.py: dirname, join, abspath from a placeholder directory, ...), and
# `import sys` binds an import path of the kernel's own and constants (host_sys.py): public kernel files put their
# own directory on sys.path when they are imported.
MODULE_NAMES['os.path'] = frozenset(host_paths.OS_PATH_NAMES)
MODULE_NAMES['sys'] = frozenset(host_sys.NAMES)
# `from pathlib import Path` binds a stand-in whose paths are text the kernel wrote (host_paths.py): the NKI profiling
# page's example computes `Path.home() / 'reports'` for `@nki.profile(working_directory=...)` when it is imported.
MODULE_NAMES['pathlib'] = frozenset(host_paths.NAMES)
# `import subprocess` binds a stand-in that starts no program (host_subprocess.py): public kernel files run
# `neuron-ls` when they are imported to read the core count, and fall back on the OSError a host without it gives.
MODULE_NAMES['subprocess'] = frozenset(host_subprocess.NAMES)
# `import re` for matching text only (the host's module, seen through a KernelModule view): the same files parse
# `NEURON_CC_FLAGS` and neuron-ls output with `re.search`. Its module attributes (enum, functools, copyreg) stay out of
# reach.
MODULE_NAMES['re'] = frozenset({'compile', 'search', 'match', 'fullmatch', 'findall', 'finditer', 'split', 'sub',
                                'subn', 'escape', 'error', 'Pattern', 'Match', 'IGNORECASE', 'I', 'MULTILINE', 'M',
                                'DOTALL', 'S', 'VERBOSE', 'X', 'ASCII', 'A'})
HELPER_NAMES.update(MODULE_NAMES)
# The names the loader takes as the entry point (entry_point.ENTRY_POINTS): never host-only code.
ENTRY_POINT_NAMES = ('kernel', 'optimized_kernel')
# Dunder methods that only restate an operator kernels may use anyway (`key=seq.__getitem__` is `seq[i]`).
OPERATOR_DUNDERS = frozenset({'__getitem__', '__len__', '__contains__'})
# `input` is a common kernel parameter name: forbidden where a read can reach the builtin (name_scopes).
SHADOWABLE_BUILTINS = frozenset({'input'})


def public_getattr(value, name, *default):
    """The kernel module's getattr: built-in getattr for public names that reach no host-access module."""
    if not isinstance(name, str) or name.startswith('_'):
        raise AttributeError(f'NKI kernels cannot read the attribute {name!r} (private or not a name)')
    if name in FORBIDDEN_MODULES:
        raise AttributeError(f'NKI kernels cannot read the attribute {name!r} (it gives access to the host)')
    if name in INTROSPECTION_ATTRIBUTES:
        raise AttributeError(f'NKI kernels cannot read the attribute {name!r} (it reaches the interpreter\'s frames)')
    if isinstance(value, types.ModuleType) and name not in MODULE_NAMES.get(value.__name__, (name,)):
        raise AttributeError(f'NKI kernels {_module_use(value.__name__)}, not {name!r}')
    return getattr(value, name, *default)


def no_debugger(*args, **kwargs):
    """The kernel module's breakpoint: a kernel run has no debugger."""
    raise RuntimeError('breakpoint() starts a debugger, which a kernel run cannot: remove the call')


def _refusal_rule(module):
    """The rule a name of a restricted module breaks: forbidden-module for a host-access module (os), else import."""
    return 'forbidden-module' if module.split('.')[0] in FORBIDDEN_MODULES else 'import'


def _module_use(module):
    names = MODULE_NAMES[module]
    if not names:
        return f'may import module {module!r} but use none of its names'
    return f'may use only {", ".join(sorted(names))} of module {module!r}'


class RuleViolation(Exception):
    def __init__(self, rule, detail, line):
        super().__init__(f'{rule}: {detail}')
        self.rule = rule
        self.detail = detail
        self.line = line


def _allowed(module):
    # `import neuronxcc` binds the same name `import neuronxcc.nki` binds: the shim package, which holds nki only
    return module in STAND_IN_MODULES or host_frameworks.is_host_framework(module) or module == 'neuronxcc' or \
        any(module == allowed or module.startswith(allowed + '.') for allowed in ALLOWED_MODULES)


def _is_dunder_or_private(name):
    return name.startswith('_')


_FOREIGN_PRIVATE: set[str] = set()


def _foreign_private_names():
    """Private names the harness and the loaded modules use (module members and the members of their classes):
    a kernel's own private member of the same name could reach them through a method called on such an object."""
    if not _FOREIGN_PRIVATE:
        names = set()
        harness = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        sources = set()
        for module in list(sys.modules.values()):
            members = getattr(module, '__dict__', None)
            if not isinstance(members, dict):
                continue
            for key, value in list(members.items()):
                if key.startswith('_'):
                    names.add(key)
                if isinstance(value, type):
                    names.update(n for n in dir(value) if n.startswith('_'))
            path = members.get('__file__')
            if isinstance(path, str) and path.endswith('.py') and \
                    not os.path.abspath(path).startswith(harness + os.sep):
                sources.add(path)      # instance attributes (self._x = ...) appear only in the source
        for path in sources:
            try:
                with open(path, encoding='utf-8', errors='replace') as source:
                    names.update(re.findall(r'\b_\w+', source.read()))
            except OSError:
                continue
        for folder, _, files in os.walk(harness):
            if os.path.relpath(folder, harness).split(os.sep)[0] in ('corpus', 'tests', 'tools'):
                continue          # kernels of our own, not the harness
            for name in files:
                if name.endswith('.py'):
                    with open(os.path.join(folder, name), encoding='utf-8') as source:
                        names.update(re.findall(r'\b_\w+', source.read()))
        _FOREIGN_PRIVATE.update(names)
    return _FOREIGN_PRIVATE


def _own_private_members(tree):
    """One-underscore names the kernel's classes define: methods, class attributes, `self._x = ...` in methods."""
    names = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(item.name)
                if item.args.args:
                    me = item.args.args[0].arg
                    names.update(n.attr for n in ast.walk(item) if isinstance(n, ast.Attribute) and
                                 isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) and n.value.id == me)
            elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    names = {n for n in names if n.startswith('_') and not n.startswith('__') and n.strip('_') not in FORBIDDEN_MODULES}
    return names - _foreign_private_names() if names else names


def _unusable(module):
    """A module kernels may not import (a host-access module such as os or sys, or any other outside the allowed
    ones and the curated helper modules: json, time, argparse, ...)."""
    root = module.split('.')[0]
    if module != root and root in FORBIDDEN_MODULES and module not in STAND_IN_MODULES:
        return True     # `import ctypes.util`: of the host modules, only os, os.path and sys have stand-ins
    return root not in MODULE_NAMES and root not in HELPER_NAMES and (root in FORBIDDEN_MODULES or not _allowed(root))


def _unused_import(node, referenced):
    """`import M` / `import M.sub` / `import M.sub as name`, or `from M import a, b` (relative imports, `*` and
    private names excluded), of a module kernels may not import, none of whose bound names the kernel names again; or
    such a `from M import a, b` of a compiler module outside NKI (`_unmodelled_compiler_module`). The alias form
    (`import neuronx_distributed.parallel_layers.parallel_state as ps`, which only a host-only method of the Mamba-2
    training repository's conv1d file uses) binds the alias; before round 46e it was always checked."""
    if isinstance(node, ast.Import):
        return all((alias.asname or alias.name.split('.')[0]) not in referenced and _unusable(alias.name)
                   and not any(_is_dunder_or_private(part) for part in alias.name.split('.')) for alias in node.names)
    return not node.level and node.module is not None and (
        _unusable(node.module) and not any(_is_dunder_or_private(part) for part in node.module.split('.'))
        or _unmodelled_compiler_module(node.module)) and \
        all(alias.name != '*' and not _is_dunder_or_private(alias.name) and (alias.asname or alias.name)
            not in referenced for alias in node.names)


def _unmodelled_compiler_module(module):
    """A neuronxcc or nki module that is not NKI's API, which the simulator does not model and kernels may not
    import: the compiler's private kernels and APIs (`neuronxcc.nki._private_kernels.mlp`, `neuronxcc.starfish.
    penguin.targets.nki.private_api`, which neuronx-distributed-inference's Llama and the NKI-Llama files derived
    from it import; Beta 2's `nki._torch_xla`, whose PyTorchXLAKernel a blog's `__main__` block wraps a kernel in)."""
    parts = module.split('.')
    return _nki_module(module) and len(parts) > 1 and (
        not _allowed(module) or any(_is_dunder_or_private(part) for part in parts))


def _is_main_guard(node):
    """`if __name__ == "__main__":` (either operand order)."""
    test = node.test if isinstance(node, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    operands = [test.left, test.comparators[0]]
    return any(isinstance(a, ast.Name) and a.id == '__name__' for a in operands) and \
        any(isinstance(a, ast.Constant) and a.value == '__main__' for a in operands)


def _main_guards(tree):
    """The module-level `if __name__ == "__main__":` statements."""
    return [node for node in getattr(tree, 'body', ()) if _is_main_guard(node)]


def host_only_functions(tree):
    """The module-level functions that only `if __name__ == "__main__":` blocks (or other such functions) name, or
    that nothing in the file names: host code that never runs, like the blocks themselves (the SDK's layernorm
    example parses its command line in a `parse_args()` that only its `__main__` block calls, with `import argparse`
    at the top; a model port's kernel file keeps a torch wrapper that no code calls, with a function-local import of
    a module of its own repository). Only a plain `def` (no decorator, which would run when the module loads, but for
    decorators of a host framework alone, host_framework_decorators: `@torch._dynamo.assume_constant_result` on a
    vLLM-neuron fork's dispatch recorder, which only its torch wrappers call), named once and bound no other way,
    and never the entry point's names; its body is neither checked nor run (the loader replaces it by a `raise`,
    stub_host_only, and drops those decorators), its parameters' defaults and annotations are, as they run at
    definition."""
    guards = _main_guards(tree)
    defs = [node for node in getattr(tree, 'body', ()) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    bound = [name for node in ast.walk(tree) for name in names_bound(node)]
    launchers = _entry_launchers(tree, defs)
    dropped = host_framework_decorators(tree)
    lone = lone_plain_kernel(tree)
    candidates = {node.name: node for node in defs + host_framework_classes(tree)
                  if all(id(d) in dropped for d in node.decorator_list)
                  and node.name not in ENTRY_POINT_NAMES and node.name not in launchers
                  and bound.count(node.name) == 1 and node.name != lone}
    while candidates:
        skipped = {id(statement) for guard in guards for statement in guard.body} | \
            {id(statement) for node in candidates.values() for statement in _never_run_body(node)}
        named = {node.id for node in _nodes_outside(tree, skipped) if isinstance(node, ast.Name)}
        kept = {name: node for name, node in candidates.items() if name not in named}
        if len(kept) == len(candidates):
            break
        candidates = kept
    return [method for node in candidates.values() for method in _host_only_defs(node)]


def host_framework_classes(tree):
    """The module-level classes whose bases are all host framework names (`class ConvNKI(nn.Conv1d)`,
    `class Mamba2Kernel(torch.autograd.Function)`: a model's torch wrappers around its kernels), with no decorator or
    keyword (a metaclass runs code at definition). Their methods run only when the framework calls them, so such a
    class that no live code names is host code like a function nothing calls (host_only_functions): the bodies of its
    methods (not its class-level statements, which run at definition and are checked) are neither checked nor run.
    The Mamba-2 training repository's grouped conv1d file calls `ps.get_tensor_model_parallel_rank()` of
    neuronx_distributed only in such a method (round 46e; before: an import violation)."""
    hosts = entry_point.host_framework_names(tree)
    return [node for node in getattr(tree, 'body', ()) if isinstance(node, ast.ClassDef) and node.bases
            and not node.keywords and not node.decorator_list
            and all(_root_name(base) in hosts for base in node.bases)]


def _host_only_defs(node):
    """The functions a host-only candidate (a function, or a class of host_framework_classes) stands for: the
    function itself, or the class's methods."""
    if isinstance(node, ast.ClassDef):
        return [child for child in node.body if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [node]


def _never_run_body(node):
    """The statements of a host-only candidate that never run: a function's body, a class's methods' bodies."""
    return [statement for child in _host_only_defs(node) for statement in child.body]


def lone_plain_kernel(tree):
    """The name of the file's one function when the file is that kernel alone, undecorated: the module defines
    exactly one function, a plain `def` (no decorator) named neither `kernel` nor `optimized_kernel`, which no code
    outside its own body and `if __name__ == "__main__":` blocks names, that uses a name the file's NKI imports bind
    and launches nothing on a grid (`k[2](...)`: a launcher), and the file binds neither entry point name outside its
    `__main__` blocks (the NKI getting-started page's `def nki_tensor_add_kernel(a_input, b_input, c_output)`, which
    workshop notebooks keep in a cell of its own and wrap with `baremetal(...)` or `nki_jit(...)` in the next one; a
    blog's Beta 2 matmul whose `__main__` block alone binds `kernel = PyTorchXLAKernel(func=matmul)`). That function is
    the entry point (kernel_source), so it is not host-only code (host_only_functions); else None."""
    body = getattr(tree, 'body', ())
    defs = [node for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef) or defs[0].decorator_list \
            or defs[0].name in ENTRY_POINT_NAMES:
        return None
    node = defs[0]
    main_body = {id(statement) for guard in _main_guards(tree) for statement in guard.body}
    bound = [name for child in _nodes_outside(tree, main_body) for name in names_bound(child)]
    if any(name in ENTRY_POINT_NAMES for name in bound) or bound.count(node.name) != 1:
        return None     # (a `kernel = Wrapper(func=f)` of a `__main__` block never runs: no entry point)
    skipped = main_body | {id(statement) for statement in node.body}
    if any(isinstance(child, ast.Name) and child.id == node.name for child in _nodes_outside(tree, skipped)):
        return None
    nki_names = {alias.asname or alias.name.split('.')[0] for statement in body
                 if isinstance(statement, (ast.Import, ast.ImportFrom)) for alias in statement.names
                 if _nki_module(statement.module if isinstance(statement, ast.ImportFrom) else alias.name)}
    inside = [child for statement in node.body for child in ast.walk(statement)]
    if not any(isinstance(child, ast.Name) and child.id in nki_names for child in inside) or any(
            isinstance(child, ast.Call) and isinstance(child.func, ast.Subscript) for child in inside):
        return None     # no NKI call (a host helper), or a launch on a grid (a launcher, never a kernel)
    return node.name


def _nki_module(module):
    """Whether an import of `module` (`nki.language`, `neuronxcc.nki`, ...) binds NKI names."""
    return bool(module) and module.split('.')[0] in ('nki', 'neuronxcc')


def host_framework_decorators(tree):
    """The decorators (ids of their nodes) of module-level functions that are made of a host framework's names alone
    (`@torch._dynamo.assume_constant_result`, `@torch.no_grad()`, `@jax.jit`): they register the function with the
    framework and never call it when the module loads, so a function that has only such decorators and that no live
    code calls is host code that never runs (host_only_functions), and the loader drops them with its body
    (stub_host_only); the static rules do not check them, as nothing of them runs. A decorator naming anything else
    (`functools.lru_cache`, `nki.jit`) or one of the host names the simulator makes real (`torch_neuronx.nki_jit`,
    `nki_op`, `wrap_nki`: host_frameworks.KNOWN), however it was imported, is not one."""
    origins = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            origins.update((alias.asname, alias.name) if alias.asname else (alias.name.split('.')[0],) * 2
                           for alias in node.names if host_frameworks.is_host_framework(alias.name))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and host_frameworks.is_host_framework(node.module):
            origins.update((alias.asname or alias.name, f'{node.module}.{alias.name}') for alias in node.names)
    found = set()
    for node in getattr(tree, 'body', ()):
        for decorator in getattr(node, 'decorator_list', ()) if isinstance(node, (ast.FunctionDef,
                                                                                  ast.AsyncFunctionDef)) else ():
            names = [part.id for part in ast.walk(decorator) if isinstance(part, ast.Name)]
            paths = [_dotted(part, origins) for part in ast.walk(decorator)
                     if isinstance(part, (ast.Name, ast.Attribute))]
            if names and all(name in origins for name in names) and \
                    not any(path in host_frameworks.KNOWN for path in paths):
                found.add(id(decorator))
    return found


def _dotted(node, origins):
    """The dotted path a name or attribute chain of host framework names stands for (`torch._dynamo.x`), or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in origins:
        return None
    return '.'.join([origins[node.id]] + parts[::-1])


def _entry_launchers(tree, defs):
    """The functions the loader may take as the entry point of a file that binds no `kernel` / `optimized_kernel`:
    those launching one of the file's decorated (NKI kernel) functions on a grid (entry_point.grid_launchers). They
    are never host-only, though the file's `__main__` block alone calls them, as every tutorial's caller is
    (`nki_tensor_add(a, b)` of the SDK's SPMD tensor addition; before round 33 its body was stubbed and the kernel
    ran as one program)."""
    if _module_binds_entry_point(tree):
        return set()
    decorated = {node.name for node in defs if node.decorator_list}
    return set(entry_point.grid_launchers(tree, decorated))


def _module_binds_entry_point(tree):
    """Does the module itself (not a function's parameter or local: `def bench(kernel, x)`) bind `kernel` or
    `optimized_kernel`, outside its `__main__` blocks, which never run?"""
    guards = {id(node) for node in _main_guards(tree)}
    stack = [node for node in getattr(tree, 'body', ()) if id(node) not in guards]
    while stack:
        node = stack.pop()
        if any(name in ENTRY_POINT_NAMES for name in names_bound(node)) and not isinstance(node, ast.arg):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def foreign_launches(tree):
    """(function, name, module) for each module-level function that launches or calls a name the file imports from
    a module kernels may not import (`from spmd_tensor_addition_nki_kernels import nki_tensor_add_kernel_` in the
    SDK's multiple-core tensor addition, whose kernel lives in a sibling file): a kernel the one kernel file lacks."""
    imported = {(alias.asname or alias.name): node.module for node in getattr(tree, 'body', ())
                if isinstance(node, ast.ImportFrom) and not node.level and node.module and _unusable(node.module)
                for alias in node.names}
    found = []
    for node in getattr(tree, 'body', ()):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(node):
            target = call.func.value if isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript) else \
                call.func if isinstance(call, ast.Call) else None
            if isinstance(target, ast.Name) and target.id in imported:
                found.append((node.name, target.id, imported[target.id]))
                break
    return found


def main_block_launches(tree):
    """The distinct grid launches (`k[4, 2]`, as source text) of the file's decorated kernels that its `__main__`
    block makes, when the file names no entry point and has no launcher function, so that the loader would run that
    kernel as one program (the SDK's mm-nisa-spmd.py launches `matmul_128x128x512_spmd[4, 2](A_T, B)` only there);
    each with its kernel's name and its grid as a tuple of ints, or None when the grid is not literal
    (`k[grid_x, grid_y]` of shapes the block computes). Empty otherwise."""
    defs = [node for node in getattr(tree, 'body', ()) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    decorated = {node.name for node in defs if node.decorator_list}
    if _module_binds_entry_point(tree) or entry_point.grid_launchers(tree, decorated):
        return []
    launches = {}
    for guard in _main_guards(tree):
        for statement in guard.body:
            for call in ast.walk(statement):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript) and \
                        isinstance(call.func.value, ast.Name) and call.func.value.id in decorated:
                    launches.setdefault(ast.unparse(call.func), (call.func.value.id, _literal_grid(call.func.slice)))
    return [(name, text, grid) for text, (name, grid) in launches.items()]


def _literal_grid(node):
    """The grid of a launch subscript as a tuple of positive ints, or None when it is not made of int literals."""
    try:
        grid = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    grid = grid if isinstance(grid, tuple) else (grid,)
    return grid if grid and all(type(g) is int and g > 0 for g in grid) else None


def adopted_main_launch(tree):
    """(kernel name, grid) of the one launch the `__main__` block makes (main_block_launches) when it is the only
    one and its grid is literal: the loader runs the kernel on that grid, as the file itself would."""
    launches = main_block_launches(tree)
    if len(launches) == 1 and launches[0][2] is not None:
        return launches[0][0], launches[0][2]
    return None


def stub_host_only(functions, tree):
    """Replace the bodies of the host-only functions (host_only_functions of `tree`, which the kernel module is then
    compiled from) by a `raise` naming them, so none of their code exists in the module. A default value made of
    host framework names alone (`def test(device=xm.xla_device())`, which a model port's test functions take) becomes
    None: the function never runs, so the value is never used, and the simulator has no device to ask for one (the
    framework's stand-in refuses the call); any other default runs at definition, as it was checked."""
    in_main = {node.id for guard in _main_guards(tree) for statement in guard.body for node in ast.walk(statement)
               if isinstance(node, ast.Name)}
    hosts = entry_point.host_framework_names(tree)
    dropped = host_framework_decorators(tree)
    owners = {id(method): node.name for node in getattr(tree, 'body', ()) if isinstance(node, ast.ClassDef)
              for method in node.body}
    for node in functions:
        node.decorator_list = [d for d in node.decorator_list if id(d) not in dropped]
        node.args.defaults = [_unused_host_default(value, hosts) for value in node.args.defaults]
        node.args.kw_defaults = [_unused_host_default(value, hosts) for value in node.args.kw_defaults]
        owner = owners.get(id(node))
        callers = "only the file's __main__ block calls" if (owner or node.name) in in_main else \
            'nothing in the file calls'
        name = f'{owner}.{node.name}' if owner else node.name
        message = f'{name}() is host code that {callers}: the simulator does not run it'
        stub = ast.Raise(exc=ast.Call(func=ast.Name('RuntimeError', ast.Load()), args=[ast.Constant(message)],
                                      keywords=[]), cause=None)
        node.body = [ast.copy_location(stub, node.body[0])]
        ast.fix_missing_locations(node)


def _unused_host_default(value, hosts):
    """`value` (a default of a host-only function), or None in its place when every name in it is a host framework's
    (`hosts`, entry_point.host_framework_names)."""
    if value is None:
        return None
    names = [node.id for node in ast.walk(value) if isinstance(node, ast.Name)]
    if names and all(name in hosts for name in names):
        return ast.copy_location(ast.Constant(None), value)
    return value


def _nodes_outside(tree, skipped):
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if id(child) not in skipped)


def _live_names(tree, host_only):
    """The names of every node of the module but the bodies of its module-level `if __name__ == "__main__":` blocks
    and of the functions only they call (`host_only`, host_only_functions): host code (tests, benchmarks, argument
    parsing) that never runs, since the harness imports the kernel file under another name and no kernel can rebind
    `__name__` (the private-attribute rule)."""
    skipped = {id(statement) for node in _main_guards(tree) for statement in node.body} | \
        {id(statement) for node in host_only for statement in node.body}
    fallbacks = _import_fallbacks(tree)
    return {node.id for node in _nodes_outside(tree, skipped) if isinstance(node, ast.Name)
            and id(node) not in fallbacks}


def _import_fallbacks(tree):
    """The targets of `name = ...` in an `except ImportError:` (or ModuleNotFoundError) handler of a `try` whose
    imports bind `name`: an optional import's fallback (nki-samples' NKI 0.6.0 max pooling: `try: from ml_dtypes
    import bfloat16` / `except ImportError: bfloat16 = None`, which only its host checks read), a binding, not a
    use of the imported name."""
    targets = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        imported = {(alias.asname or alias.name).split('.')[0] for statement in node.body
                    if isinstance(statement, (ast.Import, ast.ImportFrom)) for alias in statement.names}
        for handler in node.handlers:
            caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            if not imported or not caught or not all(isinstance(kind, ast.Name) and kind.id in (
                    'ImportError', 'ModuleNotFoundError') for kind in caught):
                continue
            targets.update(id(target) for statement in handler.body if isinstance(statement, ast.Assign)
                           for target in statement.targets
                           if isinstance(target, ast.Name) and target.id in imported)
    return targets


def unused_imports(tree, host_only):
    """The modules (roots; a compiler module outside NKI by its full name) a kernel that passed `check` imports
    without using them, which it could not import otherwise: the loader binds them to inert stand-ins. `host_only`:
    what `check` returned."""
    referenced = _live_names(tree, host_only)
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and _unused_import(node, referenced):
            roots.update(alias.name.split('.')[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and _unused_import(node, referenced):
            # a compiler module outside NKI by its full name: `neuronxcc` itself, the NKI shim, stays importable
            roots.add(node.module if _unmodelled_compiler_module(node.module) else node.module.split('.')[0])
    return sorted(roots)


def _binds_module_name(node):
    """Does `node` bind the name `__name__` (which decides whether a `__main__` block runs)?"""
    return '__name__' in names_bound(node)


# Module metadata a kernel file may bind and read like any name (`__all__ = ["kernel", ...]` after the kernels of
# a public MoE-challenge file): the interpreter reads `__all__` only for `from module import *` of this module, which
# nothing does, and `__version__` / `__author__` never; no other dunder is a plain name here.
MODULE_METADATA = frozenset(('__all__', '__version__', '__author__'))


def _bound_dunder(node):
    """The dunder name (`__builtins__`) that `node` binds other than by an assignment (which visit_Name checks) or
    a parameter (a local): an import's alias, `except E as`, a match capture or `**rest`, `global`, a def or class.
    `import numpy as __builtins__` or `case __builtins__:` would make a module the builtins of the functions defined
    after it, whose names then read that module's namespace: a KernelModule view's holds the host's module itself.
    None for none, and for `import __future__`."""
    names = [] if isinstance(node, (ast.Name, ast.arg)) else names_bound(node)
    dunders = [n for n in names if n.startswith('__') and n.endswith('__') and n != '__future__']
    return dunders[0] if dunders else None


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class _Checker(ast.NodeVisitor):
    def __init__(self, tree):
        self.main_guards = {id(node) for node in _main_guards(tree)}
        self.host_only_functions = host_only_functions(tree)
        self.host_only = {id(node) for node in self.host_only_functions}
        self.dropped_decorators = host_framework_decorators(tree)
        self.imported = set()  # names bound by imports: modules and names taken from them
        self.restricted = {}  # names bound by `import M` of a MODULE_NAMES module -> M
        self.bound = set()  # every other name the kernel binds (parameters, assignments, defs)
        # `__annotations__ = {...}` directly in a class body declares the class's fields (a frozen dataclass in
        # the vLLM flash attention kernel): it binds the class's own annotations and reads nothing
        self.class_annotations = {id(target) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                                  for statement in node.body if isinstance(statement, ast.Assign)
                                  for target in statement.targets
                                  if isinstance(target, ast.Name) and target.id == '__annotations__'}
        for node in ast.walk(tree):
            if isinstance(node, ast.arg):
                self.bound.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(node.name)
        self.shadowable_builtin_reads = {id(node) for node in builtin_reads(tree, SHADOWABLE_BUILTINS)}
        self.own_private = _own_private_members(tree)
        self.referenced = _live_names(tree, self.host_only_functions)
        # every name an import binds, wherever the import stands (a use may precede it in the source)
        self.import_bound = {(alias.asname or alias.name).split('.')[0] for node in ast.walk(tree)
                             if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}

    def fail(self, rule, detail, node):
        raise RuleViolation(rule, detail, getattr(node, 'lineno', 0))

    def check_module(self, module, node):
        for part in module.split('.'):
            if part in FORBIDDEN_MODULES and module not in STAND_IN_MODULES:
                self.fail('forbidden-module', f'module {module!r} gives access to the host', node)
        private = [part for part in module.split('.') if _is_dunder_or_private(part)]
        if private and module != '__future__':
            self.fail('private-attribute', f'module {module!r} is the compiler\'s private API ({private[0]}), not '
                      'part of NKI; the simulator does not model it', node)
        if not _allowed(module) and module not in MODULE_NAMES:
            self.fail('import', f'module {module!r} is not importable in NKI kernels (allowed: nki, '
                      'neuronxcc and neuronxcc.nki, numpy, math, functools, itertools, logging, os.environ, '
                      'os.path, sys.path, pathlib.Path, subprocess (which starts no program), re; torch, torch_xla, '
                      'torch_neuronx, jax and unittest for host code that never runs, and torch_neuronx.nki_jit, '
                      'nki_op and wrap_nki)', node)

    def visit_FunctionDef(self, node):
        if id(node) in self.host_only:
            # its body never runs (host_only_functions); what runs at definition is checked, but for the host
            # framework decorators the loader drops (host_framework_decorators)
            kept = [d for d in node.decorator_list if id(d) not in self.dropped_decorators]
            for part in kept + [node.args] + ([node.returns] if node.returns else []):
                self.visit(part)
            return
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node):
        if id(node) in self.main_guards:
            self.visit(node.test)       # its body never runs (_live_names)
            for statement in node.orelse:
                self.visit(statement)
            return
        self.generic_visit(node)

    def visit_Import(self, node):
        if _unused_import(node, self.referenced):
            self.imported.update(alias.name.split('.')[0] for alias in node.names)
            return
        for alias in node.names:
            self.check_module(alias.name, node)
            self.imported.add((alias.asname or alias.name).split('.')[0])
            if alias.name in MODULE_NAMES:
                self.restricted[alias.asname or alias.name] = alias.name
            root = alias.name.split('.')[0]
            if alias.asname is None and root in MODULE_NAMES:
                self.restricted[root] = root      # `import os.path` binds os

    def visit_ImportFrom(self, node):
        if node.level:
            self.fail('import', 'relative imports are not allowed in NKI kernels', node)
        if _unused_import(node, self.referenced):
            self.imported.update(alias.asname or alias.name for alias in node.names)
            return
        helpers = HELPER_NAMES.get(node.module or '')
        for alias in node.names:
            if alias.name == '*':
                self.fail('import', f'from {node.module} import * is not allowed', node)
            if helpers is not None:
                if alias.name not in helpers:
                    allowed = f'only {", ".join(sorted(helpers))}' if helpers else 'nothing'
                    self.fail(_refusal_rule(node.module), f'from {node.module} import {alias.name}: {allowed} may be '
                              f'imported from {node.module} in NKI kernels', node)
                self.imported.add(alias.asname or alias.name)
                continue
            module = node.module if node.module != 'neuronxcc' else f'neuronxcc.{alias.name}'
            self.check_module(module, node)
            if _is_dunder_or_private(alias.name) and node.module != '__future__':
                self.fail('private-attribute', f'importing private name {alias.name!r}', node)
            if alias.name in FORBIDDEN_MODULES:
                self.fail('forbidden-module', f'{node.module}.{alias.name} gives access to the host', node)
            self.imported.add(alias.asname or alias.name)

    def own_member(self, node):
        """`_name` one of the kernel's own members, read through a name the kernel binds or an attribute chain
        from one (`self._name`, `Cls._name`, `params.config._name`), not through an imported name
        (`np.lib._name`) nor through a call's result."""
        root = _root_name(node.value)
        return node.attr in self.own_private and root is not None and root not in self.import_bound

    def visit_Attribute(self, node):
        module = self.restricted_module(node.value)
        if module is not None and node.attr not in MODULE_NAMES[module]:
            self.fail(_refusal_rule(module), f'{module}.{node.attr}: NKI kernels {_module_use(module)}', node)
        if _is_dunder_or_private(node.attr) and node.attr not in OPERATOR_DUNDERS and not self.own_member(node) \
                and not self.super_init(node):
            self.fail('private-attribute', f'access to private attribute {node.attr!r}', node)
        self.check_attribute_name(node.attr, node)
        self.generic_visit(node)

    def restricted_module(self, node):
        """The MODULE_NAMES module `node` names: a name bound by `import M` (`os`), or an attribute chain from one
        that names a submodule listed too (`os.path`)."""
        if isinstance(node, ast.Name):
            return self.restricted.get(node.id)
        if isinstance(node, ast.Attribute):
            parent = self.restricted_module(node.value)
            if parent is not None and f'{parent}.{node.attr}' in MODULE_NAMES:
                return f'{parent}.{node.attr}'
        return None

    def super_init(self, node):
        """`super().__init__`: the zero-argument super() (not rebound by the kernel) reaches only the method's own
        instance, an instance of the kernel's class, which a call of that class initialises anyway; `super(C, x)`
        could re-initialise any object and stays refused."""
        call = node.value
        return node.attr == '__init__' and isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and \
            call.func.id == 'super' and not call.args and not call.keywords and 'super' not in self.bound

    def visit_MatchClass(self, node):
        # `case object(__class__=c)` reads the subject's attribute `__class__` into c, as `subject.__class__` does
        for name in node.kwd_attrs:
            if _is_dunder_or_private(name):
                self.fail('private-attribute', f'access to private attribute {name!r} (a class pattern)', node)
            self.check_attribute_name(name, node)
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in FORBIDDEN_BUILTINS or id(node) in self.shadowable_builtin_reads:
            self.fail('forbidden-builtin', f'{node.id!r} is not available in NKI kernels', node)
        if node.id.startswith('__') and node.id.endswith('__') and node.id != '__name__' and \
                node.id not in MODULE_METADATA and \
                id(node) not in self.class_annotations and not (node.id == '__file__' and
                                                                isinstance(node.ctx, ast.Load)):
            self.fail('private-attribute', f'access to {node.id!r}', node)
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == 'getattr' and len(node.args) >= 2 and \
                isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            name = node.args[1].value
            if _is_dunder_or_private(name):
                self.fail('private-attribute', f'access to private attribute {name!r}', node)
            self.check_attribute_name(name, node)
        self.generic_visit(node)

    def check_attribute_name(self, name, node):
        """An attribute read by name (`x.name`, `getattr(x, 'name')`) that reaches the host or the frames."""
        if name in FORBIDDEN_MODULES:
            self.fail('forbidden-module', f'attribute {name!r} gives access to the host', node)
        if name in INTROSPECTION_ATTRIBUTES:
            self.fail('introspection', f'attribute {name!r} reaches the interpreter\'s frames', node)

    def check_target(self, target, verb):
        if isinstance(target, ast.Attribute) and _root_name(target) in self.imported:
            self.fail('module-mutation', f'{verb} {ast.unparse(target)} changes imported module state', target)
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.check_target(element, verb)

    def visit_Assign(self, node):
        for target in node.targets:
            self.check_target(target, 'assigning')
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.check_target(node.target, 'assigning')
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self.check_target(node.target, 'assigning')
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            self.check_target(target, 'deleting')
        self.generic_visit(node)


def check(tree):
    """Raises RuleViolation (rule, detail, line) for the first violation in source order; returns the host-only
    functions (host_only_functions), which the loader stubs (stub_host_only)."""
    checker = _Checker(tree)
    # Imports first, wherever they are, so that mutations of names imported later are recognised.
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            checker.imported.update((a.asname or a.name).split('.')[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            checker.imported.update(a.asname or a.name for a in node.names)
    # a class's own methods (`__init__`, `__call__`) are the one binding of a dunder name a kernel makes
    methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body
               if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ast.walk(tree):
        if _binds_module_name(node):
            checker.fail('private-attribute', 'binding __name__ (it decides whether `if __name__ == "__main__":` '
                         'blocks run)', node)
        dunder = _bound_dunder(node)
        if dunder is not None and id(node) not in methods:
            checker.fail('private-attribute', f'binding {dunder!r} (a name the interpreter reads: `import numpy as '
                         '__builtins__` would make numpy\'s namespace the builtins of later functions)', node)
    checker.visit(tree)
    return checker.host_only_functions
