"""The `pathlib` module an NKI kernel file gets: the NKI profiling page's example kernel builds the directory it passes
to `@nki.profile(working_directory=...)` when it is imported (`WORKING_DIRECTORY = Path.home() / 'reports'`).
`from pathlib import Path` or `import pathlib` in the kernel module binds this stand-in, never the host's module. A
Path here is text the kernel wrote, joined with '/', and nothing more: `Path.home()` and `Path.cwd()` are the
placeholders '~' and '.', not the host's directories (the simulator saves no profile anywhere), and no method reads,
lists, resolves or writes the file system; any other attribute is an AttributeError that says so. Any other name of
pathlib is refused by the static rules and by the kernel's getattr (static_rules.MODULE_NAMES)."""
import types

NAMES = ('Path', 'PurePath', 'PosixPath', 'PurePosixPath')


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
