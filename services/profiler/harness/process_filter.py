"""A seccomp filter for the process that runs kernel code (step A), installed by harness_guard.py before anything
else runs: no new programs or processes, and none of the kernel interfaces a sandboxed simulation never needs.

The audit hook in harness_guard.py names a forbidden operation precisely, but only for operations Python audits;
this filter is the floor under it. Denied (EPERM) on x86_64 and aarch64: execve, execveat, fork, vfork, clone
without CLONE_THREAD (new threads stay allowed), ptrace, process_vm_readv/writev, unshare, setns, mount, bpf,
perf_event_open, userfaultfd, keyctl, add_key, request_key and io_uring. clone3 gets ENOSYS, so the C library
creates threads with clone, whose flags a filter can read. System calls of another ABI (x32, 32-bit) are denied.
On another architecture, or where the kernel refuses the filter, nothing is installed and `install` says why.
"""
import ctypes
import errno
import platform
import struct

_AUDIT_ARCH = {'x86_64': 0xC000003E, 'aarch64': 0xC00000B7}
_DENIED = {
    'x86_64': {'execve': 59, 'execveat': 322, 'fork': 57, 'vfork': 58, 'ptrace': 101, 'process_vm_readv': 310,
               'process_vm_writev': 311, 'unshare': 272, 'setns': 308, 'mount': 165, 'bpf': 321,
               'perf_event_open': 298, 'userfaultfd': 323, 'keyctl': 250, 'add_key': 248, 'request_key': 249,
               'io_uring_setup': 425, 'io_uring_enter': 426, 'io_uring_register': 427},
    'aarch64': {'execve': 221, 'execveat': 281, 'ptrace': 117, 'process_vm_readv': 270, 'process_vm_writev': 271,
                'unshare': 97, 'setns': 268, 'mount': 40, 'bpf': 280, 'perf_event_open': 241, 'userfaultfd': 282,
                'keyctl': 219, 'add_key': 217, 'request_key': 218, 'io_uring_setup': 425, 'io_uring_enter': 426,
                'io_uring_register': 427},
}
_CLONE = {'x86_64': 56, 'aarch64': 220}
_CLONE3 = 435
_X32_SYSCALL_BIT = 0x40000000
CLONE_THREAD = 0x00010000

# classic BPF
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16    # offsets in struct seccomp_data (args[0]'s low half on a little-endian machine)
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def program(machine):
    """The filter for `machine` as a list of (code, jt, jf, k), or None for an architecture it does not know."""
    if machine not in _AUDIT_ARCH:
        return None
    allow, deny = _SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO | errno.EPERM
    # jump targets are labels ('deny', ...), resolved below into offsets from the next instruction
    code = [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 1, 0, _AUDIT_ARCH[machine]), (_RET_K, 0, 0, deny),
            (_LD_W_ABS, 0, 0, _NR)]
    if machine == 'x86_64':
        code.append((_JGE_K, 'deny', 0, _X32_SYSCALL_BIT))
    for number in sorted(_DENIED[machine].values()):
        code.append((_JEQ_K, 'deny', 0, number))
    code += [(_JEQ_K, 'enosys', 0, _CLONE3), (_JEQ_K, 'clone', 0, _CLONE[machine]), (_RET_K, 0, 0, allow)]
    labels = {'clone': len(code)}
    code += [(_LD_W_ABS, 0, 0, _ARG0), (_JSET_K, 'allow', 'deny', CLONE_THREAD)]
    labels['allow'] = len(code)
    code.append((_RET_K, 0, 0, allow))
    labels['deny'] = len(code)
    code.append((_RET_K, 0, 0, deny))
    labels['enosys'] = len(code)
    code.append((_RET_K, 0, 0, _SECCOMP_RET_ERRNO | errno.ENOSYS))
    return [(op, labels[jt] - index - 1 if isinstance(jt, str) else jt,
             labels[jf] - index - 1 if isinstance(jf, str) else jf, k)
            for index, (op, jt, jf, k) in enumerate(code)]


def install():
    """Install the filter on this process (inherited by every thread it starts later). Returns '' when installed,
    else why not."""
    code = program(platform.machine())
    if code is None:
        return f'no seccomp filter for the {platform.machine()} architecture'
    if any(not 0 <= jt < 256 or not 0 <= jf < 256 for _, jt, jf, _ in code):
        return 'the seccomp filter has a jump beyond its range'
    raw = b''.join(struct.pack('=HBBI', *instruction) for instruction in code)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class Program(ctypes.Structure):
        _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]

    fprog = Program(len(code), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL('libc.so.6', use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f'the kernel refused the seccomp filter: {errno.errorcode.get(ctypes.get_errno(), "?")}'
    return ''
