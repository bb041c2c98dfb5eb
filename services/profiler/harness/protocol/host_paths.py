"""The `pathlib` module an NKI kernel file gets: the NKI profiling page's example kernel builds the directory it passes
to `@nki.profile(working_directory=...)` when it is imported (`WORKING_DIRECTORY = Path.home() / 'reports'`).
`from pathlib import Path` or `import pathlib` in the kernel module binds this stand-in, never the host's module. A
Path here is text the kernel wrote, joined with '/', and nothing more: `Path.home()` and `Path.cwd()` are the
placeholders '~' and '.', not the host's directories (the simulator saves no profile anywhere), and no method reads,
lists, resolves or writes the file system; any other attribute is an AttributeError that says so. Any other name of
pathlib is refused by the static rules and by the kernel's getattr (static_rules.MODULE_NAMES).

`os.path` (the `path` of the os stand-in, host_environment.py, also `from os.path import join`) is the same idea for
the text functions public kernel files call when they are imported (`os.path.dirname(os.path.abspath(__file__))` to
put their own directory on sys.path): posixpath's functions that only rewrite text, and `abspath`, which takes a
relative path from KERNEL_DIRECTORY, the placeholder the kernel's `__file__` also names (the simulator does not tell a
kernel where on the host it runs). Nothing of it asks the file system (no exists, isfile, getsize, realpath); such
names are refused as for pathlib.
"""
import posixpath
import types

NAMES = ('Path', 'PurePath', 'PosixPath', 'PurePosixPath')
# The directory a kernel file is in, as the kernel sees it (its `__file__` is KERNEL_DIRECTORY/<file name>), and its
# working directory for os.path.abspath.
KERNEL_DIRECTORY = '/kernel'
# posixpath's functions that compute on the text alone
OS_PATH_TEXT = ('basename', 'commonpath', 'commonprefix', 'dirname', 'isabs', 'join', 'normcase', 'normpath',
                'relpath', 'split', 'splitext')
OS_PATH_NAMES = OS_PATH_TEXT + ('abspath', 'sep', 'extsep', 'pardir', 'curdir')


class Path:
    """A path as text the kernel gave (see the module docstring)."""
    __slots__ = ('text',)

    def __init__(self, *parts):
        texts = []
        for part in parts:
            if isinstance(part, Path):
                texts.append(part.text)
            elif isinstance(part, str):
                texts.append(part)
            else:
                raise TypeError(f'a path is made of strings and paths, not {type(part).__name__}')
        text = '.'
        for part in texts:
            text = part if part.startswith('/') or text == '.' else f'{text.rstrip("/")}/{part}'
        object.__setattr__(self, 'text', text)

    @classmethod
    def home(cls):
        return cls('~')

    @classmethod
    def cwd(cls):
        return cls('.')

    def joinpath(self, *parts):
        return Path(self, *parts)

    @property
    def name(self):
        return self.text.rstrip('/').rsplit('/', 1)[-1]

    @property
    def parent(self):
        head = self.text.rstrip('/').rsplit('/', 1)
        return Path(head[0] or '/') if len(head) == 2 else Path('.')

    def __truediv__(self, other):
        return Path(self, other)

    def __rtruediv__(self, other):
        return Path(other, self)

    def __str__(self):
        return self.text

    def __repr__(self):
        return f'Path({self.text!r})'

    def __eq__(self, other):
        return isinstance(other, Path) and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    def __setattr__(self, name, value):
        raise AttributeError('an NKI kernel\'s Path cannot be changed')

    def __getattr__(self, name):
        raise AttributeError(f'Path.{name}: an NKI kernel\'s pathlib is a stand-in that only joins names (Path.home() '
                             'is "~"); it cannot reach the file system')


def stand_in() -> types.ModuleType:
    """A fresh stand-in module (one per kernel load)."""
    module = types.ModuleType('pathlib', 'pathlib for NKI kernels: paths as text, no file system')
    for name in NAMES:
        setattr(module, name, Path)
    return module


def _abspath(path):
    """os.path.abspath with KERNEL_DIRECTORY as the working directory."""
    return posixpath.normpath(posixpath.join(KERNEL_DIRECTORY, path))


def _relpath(path, start=None):
    """os.path.relpath with KERNEL_DIRECTORY as the working directory (posixpath's asks the host for it)."""
    return posixpath.relpath(_abspath(path), _abspath(start if start is not None else '.'))


def os_path_stand_in() -> types.ModuleType:
    """A fresh `os.path` stand-in (one per kernel load)."""
    module = types.ModuleType('os.path', 'os.path for NKI kernels: paths as text, no file system')
    for name in OS_PATH_TEXT:
        setattr(module, name, getattr(posixpath, name))
    module.abspath = _abspath               # type: ignore[attr-defined]
    module.relpath = _relpath               # type: ignore[attr-defined]
    for name in ('sep', 'extsep', 'pardir', 'curdir'):
        setattr(module, name, getattr(posixpath, name))
    return module
