"""Runs the profiling harness with an audit hook that reports forbidden operations made by kernel code.

Usage (inside the sandbox): python3 harness_guard.py KERNEL_PATH HARNESS_SCRIPT [harness args...]

bubblewrap is the security boundary; this hook only gives a precise verdict. When code from KERNEL_PATH is on
the stack of a network, process, signal, native-code (ctypes), unpickling or out-of-scratch write operation, or
of running code from a file in the scratch directory, the hook writes `/scratch/violation.json` ({"event",
"detail", "line"}) once and raises SandboxViolation (a BaseException, so a kernel's `except Exception` cannot
swallow it). The C++ worker turns the marker into SANDBOX_VIOLATION.
Below the hook, a seccomp filter (process_filter.py) denies new processes and programs to the whole process
(unless the worker sets ACCELOPT_PROCESS_FILTER=off, as the neuron backend does: the Neuron SDK runs its compiler
as a process).
"""
import json
import os
import runpy
import sys

import process_filter

SCRATCH = "/scratch"
MARKER = os.path.join(SCRATCH, "violation.json")

_NETWORK = {"socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo", "socket.__new__"}
_PROCESS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
            "subprocess.Popen", "pty.spawn"}
_SIGNAL = {"os.kill", "os.killpg", "signal.pthread_kill"}
_FILE_CHANGE = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
                "os.symlink", "os.link", "shutil.rmtree"}
# Native code and memory: the harness has imported ctypes before any kernel code runs, so a kernel that reaches the
# module (through an unpickled payload, say) needs no new dlopen: looking up a symbol, calling it or wrapping a raw
# address are events of their own.
_NATIVE = {"ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function", "ctypes.cdata",
           "ctypes.cdata/buffer", "ctypes.string_at", "ctypes.wstring_at", "ctypes.PyObj_FromPtr",
           "ctypes.addressof"}
# Unpickling runs whatever callable the data names (np.load(..., allow_pickle=True) of a file the kernel wrote):
# every global a pickle looks up while kernel code is on the stack is refused.
_UNPICKLE = {"pickle.find_class"}
# Running code from a file in the scratch directory, which the kernel can write: a module loaded from there (numpy's
# npy_load_module did it, before protocol/kernel_modules.py put numpy.compat out of reach) is code the static rules
# never saw. Code built from strings (a dataclass's __init__) and the host's own modules are not refused.
_CODE = {"exec"}
# Every event the hook looks at. Anything else returns at once: a simulated kernel raises about ten audit events per
# instruction (builtins.id, sys._getframe, a frame's f_code), a million for a large kernel.
_DETAIL_CHARS = 1000
_WATCHED = frozenset(_NETWORK | _PROCESS | _SIGNAL | _FILE_CHANGE | _NATIVE | _UNPICKLE | _CODE | {"open"})


class SandboxViolation(BaseException):
    """A forbidden operation attempted by kernel code."""


def _kernel_line(kernel_path):
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == kernel_path:
            return frame.f_lineno
        frame = frame.f_back
    return 0


def _outside_scratch(path):
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return True
    return not (real == SCRATCH or real.startswith(SCRATCH + "/") or real.startswith("/tmp/"))


def _opened_path(path):
    """Is an opened `path` a path (not an inherited descriptor: the program pipe, 3, or the standard streams)?"""
    return not (isinstance(path, int) and 0 <= path <= 3)


def _scratch_code(code, kernel_path):
    """The file of a code object run from the scratch directory (other than the kernel's own), else None."""
    filename = getattr(code, "co_filename", "")
    if not isinstance(filename, str) or not filename or filename.startswith("<") or _outside_scratch(filename) or \
            os.path.realpath(filename) == kernel_path:
        return None     # ("<string>": built from a string)
    return filename


def _shown(path):
    return str(path) if isinstance(path, int) else os.fsdecode(path)


def _install(kernel_path):
    state = {"reported": False}

    def hook(event, args):
        if event not in _WATCHED or state["reported"]:
            return
        if event in _NETWORK or event in _PROCESS or event in _SIGNAL or event in _NATIVE:
            detail = event
        elif event in _UNPICKLE:
            detail = "unpickling %s.%s" % (args[0], args[1]) if len(args) >= 2 else "unpickling"
        elif event == "open" and len(args) >= 2 and isinstance(args[1], str) and \
                any(c in args[1] for c in "wax+") and _opened_path(args[0]) and _outside_scratch(args[0]):
            detail = "write to %s" % _shown(args[0])
        elif event == "open" and len(args) >= 3 and isinstance(args[2], int) and \
                args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and _opened_path(args[0]) and \
                _outside_scratch(args[0]):
            detail = "write to %s" % _shown(args[0])
        elif event in _FILE_CHANGE and args and _outside_scratch(args[0]):
            detail = "%s %s" % (event, _shown(args[0]))
        elif event in _CODE and args and _scratch_code(args[0], kernel_path):
            detail = "running code from %s" % args[0].co_filename
        else:
            return
        line = _kernel_line(kernel_path)
        if not line:
            return  # the harness itself, not the kernel
        if len(detail) > _DETAIL_CHARS:     # names the kernel chose (a path, an unpickled global)
            detail = detail[:_DETAIL_CHARS] + "..."
        state["reported"] = True
        with open(MARKER, "w") as f:
            json.dump({"event": event, "detail": detail, "line": line}, f)
        raise SandboxViolation("kernel.py:%d: forbidden operation: %s" % (line, detail))

    sys.addaudithook(hook)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: harness_guard.py KERNEL_PATH HARNESS_SCRIPT [args...]")
    kernel_path, script = sys.argv[1], sys.argv[2]
    sys.argv = [script] + sys.argv[3:]
    # before any other code runs (and any thread starts); the neuron backend's runner turns it off, since the Neuron
    # SDK starts the compiler and the runtime's helpers as processes
    if os.environ.get("ACCELOPT_PROCESS_FILTER", "on") == "off":
        not_installed = ""
    else:
        not_installed = process_filter.install()
    if not_installed:
        print("harness_guard: %s; the sandbox relies on bubblewrap and the audit hook" % not_installed,
              file=sys.stderr)
    _install(os.path.realpath(kernel_path))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
