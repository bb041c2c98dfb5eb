"""The candidate kernel: loading its module, the low-precision policy, and locating its own source lines in
errors (every message names `kernel.py:LINE: <source text>`)."""
import ast
import builtins
import io
import linecache
import os
import re
import tokenize
import traceback
import types

from nki_sim.errors import CompileError
from nki_sim.beta import declare_source
from nki_sim.jit import Kernel
from nki_sim.language import MEMORY_KEYWORDS

from . import host_environment, host_frameworks, host_logging, host_paths, host_subprocess, host_sys, static_rules
from .entry_point import entry_point
from .kernel_modules import fresh_views, kernel_module
from .loop_returns import hoist_loop_returns
from .problem import load_module, registered

LOW_PRECISION = re.compile(r'bfloat16|float16|float8|float4|tfloat32|\bbf16\b|\bfp16\b|\bfp8\b|\btf32\b')


def _imported_name(message):
    """The name of a failed `from M import name` (Python 3.11 ImportError has no name_from): its message is
    "cannot import name 'X' from 'M' (...)"."""
    match = re.match(r"cannot import name '([^']+)'", message)
    return match.group(1) if match else None


def stand_ins_imported(tree):
    """The stand-in modules (static_rules.STAND_IN_MODULES, and host frameworks by their root) the kernel module
    imports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    hosts = {name.split('.')[0] for name in names if host_frameworks.is_host_framework(name)}
    return sorted(names & static_rules.STAND_IN_MODULES | hosts)


STAND_INS = {'logging': host_logging.stand_in, 'os': host_environment.stand_in,
             'pathlib': host_paths.stand_in, 'subprocess': host_subprocess.stand_in, 'sys': host_sys.stand_in}


class InertModule(types.ModuleType):
    """What an unused `import sys` / `import json` / `from time import time` ... of a kernel binds
    (static_rules.unused_imports): a module of that name holding nothing (the names of a from-import: such modules).
    The static rules keep the kernel from naming it; anything that still reached it (an attribute read) finds
    nothing."""

    def __getattr__(self, name):
        raise AttributeError(f'module {self.__name__!r} is an inert stand-in: an NKI kernel may import it but not '
                             'use it')


def kernel_builtins(names, inert):
    """Builtins for a kernel module: the host's, with every module it imports seen through a KernelModule view
    (kernel_modules.py), `import logging` (a logging that drops messages, host_logging.py), `import os` (an
    environment of the kernel's own and os.path's text functions, host_environment.py), `import sys` (an import path
    of the kernel's own, host_sys.py), `import subprocess` (starting no program, host_subprocess.py), `from pathlib
    import Path` (paths as text, host_paths.py) and the host
    frameworks
    (torch, torch_xla, torch_neuronx, whose nki_jit is nki.jit, and jax: host_frameworks.py) bound to stand-ins
    (`names`), and the modules it could not import but imports without using them (`inert`, roots: `import os.path`
    too) bound to InertModule, never the host's packages. The static rules keep the kernel from reaching
    `__import__` or `__builtins__`."""
    fresh_views()
    modules = {name: STAND_INS[name]() for name in names if name in STAND_INS}
    if 'os.path' in names:      # `import os.path` binds os; `from os.path import join` reads the same os's path
        modules['os.path'] = modules.setdefault('os', host_environment.stand_in()).path
    inert_modules = {name: InertModule(name) for name in inert}
    host_import = builtins.__import__

    def kernel_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name in modules:
            return modules[name] if fromlist else modules[name.split('.')[0]]
        if level == 0 and (name in inert_modules or name.split('.')[0] in inert_modules):
            if not fromlist:
                root = module = inert_modules[name.split('.')[0]]
                for part in name.split('.')[1:]:    # `import M.sub as s` reads M.sub: an inert submodule
                    if part not in vars(module):
                        setattr(module, part, InertModule(f'{module.__name__}.{part}'))
                    module = vars(module)[part]
                return root
            module = InertModule(name)      # `from M import a`: inert too, for names the kernel never uses
            for imported in fromlist:
                setattr(module, imported, InertModule(f'{name}.{imported}'))
            return module
        if level == 0 and host_frameworks.is_host_framework(name):
            return host_frameworks.imported(name, fromlist)
        module = host_import(name, globals, locals, fromlist, level)
        if type(fromlist) is list:
            # C code's import (PyImport_Import: numpy's tofile imports os) under a kernel frame, which uses that
            # frame's builtins; it reads the module from sys.modules and never hands it to the kernel
            return module
        if fromlist and level == 0 and name.split('.')[0] in static_rules.HELPER_NAMES:
            return module       # `from collections import namedtuple`: the names the static rules allow, only
        return kernel_module(module)

    namespace = dict(vars(builtins))
    namespace['__import__'] = kernel_import
    return namespace


class KernelRejected(Exception):
    """The kernel cannot run: compile-time problem found before execution."""

    def __init__(self, message, line=0):
        super().__init__(message)
        self.message = message
        self.line = line


class KernelSource:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.name = os.path.basename(self.path)

    def text(self):
        """The kernel's text, decoded as Python decodes source files (UTF-8 unless a PEP 263 coding line says
        otherwise); a file that is not such text is a KernelRejected naming the line of the first bad byte."""
        with open(self.path, 'rb') as f:
            data = f.read()
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:  # an unknown coding line, or undecodable first lines: the decoding below names the byte
            encoding = 'utf-8'
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as error:
            line = data[:error.start].count(b'\n') + 1
            raise KernelRejected(f'{self.name}:{line}: the kernel is not {error.encoding} text (byte '
                                 f'0x{data[error.start]:02x} at offset {error.start}); Python source is UTF-8 unless '
                                 'a coding line says otherwise (PEP 263)', line) from error

    def source_line(self, line):
        return linecache.getline(self.path, line).strip() if line else ''

    def where(self, line):
        """'kernel.py:LINE: <source>' (or just the file name when the line is unknown)."""
        if not line:
            return self.name
        return f'{self.name}:{line}: {self.source_line(line)}'

    def check_low_precision(self):
        """Reject kernels whose code (comments stripped) mentions a format below float32 (fp16, bf16, tf32, fp8,
        fp4)."""
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(self.text()).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return
        for token in tokens:
            if token.type == tokenize.COMMENT:
                continue
            found = LOW_PRECISION.search(token.string)
            if found:
                line = token.start[0]
                raise KernelRejected(f'{self.where(line)}\nlow-precision type {found.group(0)!r} is not allowed: '
                                     'kernels must compute in float32 (fp16, bf16, tf32 and fp8 are banned)', line)

    def check_static_rules(self):
        """NKI's static rules (static_rules.py) on the syntax tree, before any kernel code runs; returns the tree and
        its host-only functions (static_rules.host_only_functions)."""
        try:
            tree = ast.parse(self.text(), filename=self.path)
        except SyntaxError as error:
            line = error.lineno or 0
            raise KernelRejected(f'{self.where(line)}\nSyntaxError: {error.msg}', line) from error
        try:
            host_only = static_rules.check(tree)
        except static_rules.RuleViolation as violation:
            raise KernelRejected(f'{self.where(violation.line)}\nNKI static rule {violation.rule}: '
                                 f'{violation.detail}', violation.line) from violation
        return tree, host_only

    def load_entry_point(self):
        """Check the static rules, import the module and return its entry point (entry_point.py)."""
        linecache.checkcache(self.path)
        tree, host_only = self.check_static_rules()
        foreign = static_rules.foreign_launches(tree)     # before stub_host_only empties the bodies
        try:
            preset = {'getattr': static_rules.public_getattr, 'breakpoint': static_rules.no_debugger,
                      '__file__': f'{host_paths.KERNEL_DIRECTORY}/{self.name}'}
            preset['__builtins__'] = kernel_builtins(stand_ins_imported(tree),
                                                     static_rules.unused_imports(tree, host_only))
            static_rules.stub_host_only(host_only, tree)    # functions only `__main__` calls, or none: not run
            if declare_source(self.path, tree):
                preset.update(MEMORY_KEYWORDS)
                module = self.run_tree(tree, preset) if host_only else \
                    load_module(self.path, 'accelopt_candidate_kernel', preset)
            elif hoist_loop_returns(tree) or host_only:
                module = self.run_tree(tree, preset)
            else:
                module = load_module(self.path, 'accelopt_candidate_kernel', preset)
        except SyntaxError as error:
            line = error.lineno or 0
            raise KernelRejected(f'{self.where(line)}\nSyntaxError: {error.msg}', line) from error
        except CompileError as error:
            line = error.line or self.line_of(error)
            raise KernelRejected(f'{self.where(line)}\n{error.message}', line) from error
        except ModuleNotFoundError as error:
            line = self.line_of(error)
            if (error.name or '').split('.')[0] in ('nki', 'neuronxcc'):
                raise KernelRejected(f'{self.where(line)}\nmodule {error.name!r} is not provided by the simulator '
                                     '(docs/simulator.md lists the NKI modules and names it supports)', line) from error
            raise KernelRejected(f'{self.where(line)}\nimporting the kernel failed: {type(error).__name__}: '
                                 f'{error}', line) from error
        except ImportError as error:
            line = self.line_of(error)
            name = getattr(error, 'name_from', None) or _imported_name(str(error))
            if (error.name or '').split('.')[0] in ('nki', 'neuronxcc') and name:
                raise KernelRejected(f'{self.where(line)}\nname {name!r} of module {error.name!r} is not provided by '
                                     'the simulator (docs/simulator.md lists the NKI modules and names it supports)',
                                     line) from error
            raise KernelRejected(f'{self.where(line)}\nimporting the kernel failed: {type(error).__name__}: '
                                 f'{error}', line) from error
        except Exception as error:
            line = self.line_of(error)
            raise KernelRejected(f'{self.where(line)}\nimporting the kernel failed: {type(error).__name__}: '
                                 f'{error}', line) from error
        entry, found = entry_point(module, tree)
        lone = static_rules.lone_plain_kernel(tree)
        if entry is None and lone and callable(getattr(module, lone, None)):
            entry = getattr(module, lone)     # the file is one undecorated kernel (static_rules.lone_plain_kernel)
        adopted = static_rules.adopted_main_launch(tree)
        if isinstance(entry, Kernel) and not entry.grid and adopted and getattr(module, adopted[0], None) is entry:
            entry = entry[adopted[1]]     # the one launch the file makes, in its __main__ block (`k[4, 2](a, b)`)
        if entry is None:
            missing = ''.join(f'; {function} calls {name}, which the file imports from module {module!r}: the '
                              'simulator runs the one kernel file it is given, so that kernel must be in it (copy '
                              f'it into this file in place of the import)' for function, name, module in foreign)
            raise KernelRejected(f'{self.name} defines neither `kernel` nor `optimized_kernel`{found}{missing}')
        return entry

    def run_tree(self, tree, preset):
        """The kernel module from its (rewritten) syntax tree, compiled under the kernel file's name so that errors
        name its lines (loop_returns.py; the static rules were checked on the tree as written)."""
        module = types.ModuleType('accelopt_candidate_kernel')
        module.__file__ = self.path
        vars(module).update(preset)
        with registered(module):
            exec(compile(tree, self.path, 'exec'), vars(module))
        return module

    def line_of(self, error):
        """The innermost traceback frame inside the kernel file (0 if the kernel is not on the stack)."""
        line = 0
        for frame in traceback.extract_tb(error.__traceback__):
            if os.path.abspath(frame.filename) == self.path:
                line = frame.lineno or 0
        return line

    def describe(self, error):
        """(message, line) for an exception raised while the kernel ran."""
        line = getattr(error, 'line', 0) or self.line_of(error)
        detail = error.message if isinstance(error, CompileError) else f'{type(error).__name__}: {error}'
        return f'{self.where(line)}\n{detail}', line
