"""The `sys` module an NKI kernel file gets: public kernel files put their own directory on the import path when they
are imported (`sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))`, a video-interpolation port's
resample kernel) and read interpreter constants (`sys.maxsize` as an infinite bound). `import sys` in the kernel
module binds this stand-in, never the host's module: `path` is a list of the kernel's own, empty when the kernel is
loaded (the loader imports only the allowed modules, never from a path the kernel names, so changing it changes
nothing), and the constants are values. Any other name of sys (modules, argv, exit, stdout, settrace, ...) is refused
by the static rules and by the kernel's getattr (static_rules.MODULE_NAMES)."""
import sys
import types

NAMES = ('path', 'maxsize', 'version_info', 'byteorder')


def stand_in() -> types.ModuleType:
    """A fresh stand-in module (one per kernel load: a kernel cannot leave state for another)."""
    module = types.ModuleType('sys', "sys for NKI kernels: an import path of the kernel's own and constants")
    module.path = []                                # type: ignore[attr-defined]
    module.maxsize = sys.maxsize                    # type: ignore[attr-defined]
    module.version_info = sys.version_info          # type: ignore[attr-defined]
    module.byteorder = sys.byteorder                # type: ignore[attr-defined]
    return module
