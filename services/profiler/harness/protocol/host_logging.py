"""The `logging` module an NKI kernel file gets: public kernels import it for host-side messages
(`logger = logging.getLogger(__name__)`, `log_level=logging.INFO` passed to a compiler hint). The kernel never
reaches the host's logging package (its handlers write files and open sockets): `import logging` in the kernel
module binds this stand-in, whose loggers drop every message. Anything else of logging (handlers, config) is an
AttributeError that names what the stand-in provides."""
import types

LEVELS = {'NOTSET': 0, 'DEBUG': 10, 'INFO': 20, 'WARNING': 30, 'WARN': 30, 'ERROR': 40, 'CRITICAL': 50,
          'FATAL': 50}
# The levels neuronxcc's logging package adds to the standard module when a kernel imports neuronxcc (TRACE 5,
# USER 60, OFF 70): kernels written against it silence the compiler with `logging.disable(logging.OFF)`, the
# CS 149 Trainium assignment's starter code among them, which plain Python's logging would reject.
LEVELS.update({'TRACE': 5, 'USER': 60, 'OFF': 70})
MESSAGE_FUNCTIONS = ('debug', 'info', 'warning', 'warn', 'error', 'exception', 'critical', 'fatal', 'log')
NAMES = tuple(LEVELS) + MESSAGE_FUNCTIONS + ('getLogger', 'basicConfig', 'disable', 'Logger')


def _drop(*args, **kwargs):
    return None


class Logger:
    """A logger that drops every message; levels are kept so that `isEnabledFor` answers consistently."""

    def __init__(self, name='root'):
        self.name = name
        self.level = 0

    def setLevel(self, level):
        self.level = level

    def getEffectiveLevel(self):
        return self.level

    def isEnabledFor(self, level):
        return False

    def getChild(self, suffix):
        return Logger(f'{self.name}.{suffix}')

    def addHandler(self, handler):
        raise AttributeError('logging handlers are not available to NKI kernels (the simulator drops log messages)')


for _name in MESSAGE_FUNCTIONS:
    setattr(Logger, _name, staticmethod(_drop))


def _missing(name):
    raise AttributeError(f'logging.{name} is not available to NKI kernels: the simulator gives kernels a logging '
                         f'module whose messages are dropped ({", ".join(NAMES)})')


def stand_in():
    """A fresh stand-in module (one per kernel load: a kernel cannot leave state for another)."""
    module = types.ModuleType('logging', 'logging for NKI kernels: every message is dropped')
    loggers = {}

    def get_logger(name=None):
        key = name or 'root'
        if key not in loggers:
            loggers[key] = Logger(key)
        return loggers[key]

    vars(module).update(LEVELS)
    for name in MESSAGE_FUNCTIONS:
        setattr(module, name, _drop)
    module.getLogger = get_logger
    module.basicConfig = _drop
    module.disable = _drop
    module.Logger = Logger
    module.__getattr__ = _missing
    return module
