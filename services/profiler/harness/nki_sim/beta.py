"""Which NKI a kernel module is written against: Beta 1 (`neuronxcc.nki`) or Beta 2 (`nki`), judged by its import
statements. The two packages are one here (nki_sim/surface.py): jit sets a run's `beta2` flag from this module (the
Beta 2 call forms of call_forms.py and Beta 2's defaults read the flag), and language.py asks it about the caller of
a Beta 1-only spelling (`nl.float32(1.0)`)."""
import ast
import os
import types
from typing import Any, Dict, Optional, Set, Tuple


def uses_beta2(func: Any) -> bool:
    """The kernel's module imports the Beta 2 `nki` package and nothing of the Beta 1 `neuronxcc` one, judged by
    the import statements of its source file (imports_beta2), as the kernel loader judges it. The two packages
    hold the very same function objects here, so a module's globals cannot tell `from neuronxcc.nki.language
    import affine_range` (Beta 1: iterations in parallel, write conflicts refused) from the Beta 2 spelling; an
    unused `import nki` beside them made a Beta 1 kernel a Beta 2 one. A file the kernel loader parsed keeps the
    loader's decision (declare_source: made before any kernel code ran, and not parsed again); another file is
    parsed here; without a readable source file: the module objects among the function's globals."""
    return code_uses_beta2(getattr(func, '__code__', None), getattr(func, '__globals__', {}))


def code_uses_beta2(code: Any, module_globals: Dict[str, Any]) -> bool:
    """uses_beta2 of the function or module whose code object and globals these are (nl.float32(...) asks it of
    its caller's frame, language._scalar_call)."""
    path = getattr(code, 'co_filename', None)
    if path in _DECLARED:
        return _DECLARED[path]
    tree = _module_tree(path)
    if tree is not None:
        return imports_beta2(tree)
    names = {getattr(v, '__name__', None) for v in module_globals.values() if isinstance(v, types.ModuleType)}
    return any(n == 'nki' or n.startswith('nki.') for n in names if n) and \
        not any(n and n.startswith('neuronxcc') for n in names)


def imports_beta2(tree: ast.AST) -> bool:
    """The module imports the Beta 2 `nki` package (`import nki`, `import nki.language as nl`, `from nki import
    isa`) and nothing of the Beta 1 `neuronxcc` one."""
    roots: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split('.')[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split('.')[0])
    return 'nki' in roots and 'neuronxcc' not in roots


# Beta 2 or not, per kernel source path, as the kernel loader decided it from the tree it parsed (declare_source)
_DECLARED: Dict[str, bool] = {}


def declare_source(path: str, tree: ast.AST) -> bool:
    """Record whether the kernel module at `path`, parsed by the loader into `tree`, is written against Beta 2, for
    the runs of its kernels (uses_beta2); returns it."""
    beta2 = _DECLARED[path] = imports_beta2(tree)
    return beta2


_TREES: Dict[Tuple[str, int, int], Optional[ast.AST]] = {}


def _module_tree(path: Optional[str]) -> Optional[ast.AST]:
    """The syntax tree of the source file at `path` (kept per path, modification time and size: a process that
    runs several kernels may find another file at a path), None when it cannot be read or parsed."""
    if not path:
        return None
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    key = (path, status.st_mtime_ns, status.st_size)
    if key not in _TREES:
        try:
            with open(path, encoding='utf-8') as f:
                _TREES[key] = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            _TREES[key] = None
    return _TREES[key]
