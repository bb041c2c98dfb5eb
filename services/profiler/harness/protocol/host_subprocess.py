"""The `subprocess` module an NKI kernel file gets: public kernel files probe the machine when they are imported
(`subprocess.run(["neuron-ls"], capture_output=True, text=True)` to read the logical NeuronCore config, falling back
to one core on `OSError`). `import subprocess` in the kernel module binds this stand-in, never the host's module: it
runs no program. Every way to start one raises FileNotFoundError, as on a host without the program, an OSError the
file's own fallback catches; the exception classes and constants are there for its `except` clauses and arguments.
Any other name of subprocess is refused by the static rules and by the kernel's getattr
(static_rules.MODULE_NAMES)."""
import errno
import subprocess
import types

STARTERS = ('run', 'call', 'check_call', 'check_output', 'Popen', 'getoutput', 'getstatusoutput')
NAMES = STARTERS + ('SubprocessError', 'CalledProcessError', 'TimeoutExpired', 'PIPE', 'STDOUT', 'DEVNULL')


def _program(args):
    """The program a call names: its first argument's first word (a list or a command line)."""
    if isinstance(args, (list, tuple)):
        return str(args[0]) if args else ''
    return str(args).split(' ', 1)[0]


def _starter(name):
    def start(args=None, *rest, **options):
        program = _program(args)
        raise FileNotFoundError(errno.ENOENT, f'subprocess.{name}: the simulator runs no program (NKI kernel files '
                                'get a subprocess without programs, as on a host without Neuron tools)', program)
    start.__name__ = name
    return start


def stand_in() -> types.ModuleType:
    """A fresh stand-in module (one per kernel load: a kernel cannot leave state for another)."""
    module = types.ModuleType('subprocess', 'subprocess for NKI kernels: no program can be started')
    for name in STARTERS:
        setattr(module, name, _starter(name))
    for name in NAMES[len(STARTERS):]:
        setattr(module, name, getattr(subprocess, name))
    return module
