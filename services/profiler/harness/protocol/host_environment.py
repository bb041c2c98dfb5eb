"""The `os` module an NKI kernel file gets: public kernel files set compiler and runtime flags when they are imported
(`os.environ["NEURON_CC_FLAGS"] = " --disable-dge "`, `os.environ["NEURON_FRAMEWORK_DEBUG"] = "1"`) and read them
back (`os.environ.get(...)`, `os.getenv(...)`). `import os` in the kernel module binds this stand-in, never the host's
module: `environ` is a dict of the kernel's own, empty when the kernel is loaded (the process's environment is not
the kernel's to read or to change), and `getenv` reads it. The simulator has no compiler to pass the flags to.
`os.path` is the text-only stand-in of host_paths.py. Any other name of os is refused by the static rules and by the
kernel's getattr (static_rules.MODULE_NAMES)."""
import types

from . import host_paths

NAMES = ('environ', 'getenv', 'path')


def stand_in() -> types.ModuleType:
    """A fresh stand-in module (one per kernel load: a kernel cannot leave state for another)."""
    module = types.ModuleType('os', "os for NKI kernels: an environment of the kernel's own")
    environ: dict = {}

    def getenv(key, default=None):
        return environ.get(key, default)

    module.environ = environ        # type: ignore[attr-defined]
    module.getenv = getenv          # type: ignore[attr-defined]
    module.path = host_paths.os_path_stand_in()     # type: ignore[attr-defined]
    return module
