"""The seccomp filter of step A (process_filter.py), installed in a child process: new processes and programs are
denied however they are asked for (the paths the audit hook cannot see included), threads and numpy still work."""
import os
import platform
import subprocess
import sys
import textwrap
import unittest

import process_filter

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent('''
    import os, sys, threading
    sys.path.insert(0, {harness!r})
    import process_filter
    print('installed' if process_filter.install() == '' else 'not installed')
    ran = []
    thread = threading.Thread(target=lambda: ran.append(1))
    thread.start()
    thread.join()
    print('thread', len(ran))
    import numpy as np
    print('numpy', int(np.ones((256, 256)).dot(np.ones((256, 256))).sum()))
    import ctypes, subprocess

    def unshare_user_namespace():
        libc = ctypes.CDLL('libc.so.6', use_errno=True)
        if libc.unshare(0x10000000) != 0:      # CLONE_NEWUSER
            raise OSError(ctypes.get_errno(), 'unshare')
    attempts = (
        ('fork', os.fork),
        ('subprocess', lambda: subprocess.run(['/bin/true'])),
        ('posix_spawn', lambda: os.posix_spawn('/bin/true', ['true'], {{}})),
        ('execv', lambda: os.execv('/bin/true', ['true'])),
        ('unshare', unshare_user_namespace),
    )
    for name, attempt in attempts:
        try:
            if attempt() == 0:
                os._exit(0)     # a forked child, had the fork not been denied
            print(name, 'allowed')
        except OSError as error:
            print(name, 'denied', error.errno)
''')


@unittest.skipUnless(platform.machine() in ('x86_64', 'aarch64'), 'the filter knows x86_64 and aarch64')
class ProcessFilterTest(unittest.TestCase):
    def test_new_processes_and_programs_are_denied_and_threads_still_run(self):
        done = subprocess.run([sys.executable, '-c', CHILD.format(harness=HARNESS)], capture_output=True, text=True,
                              timeout=60, check=False)
        lines = done.stdout.splitlines()
        self.assertEqual(lines[:3], ['installed', 'thread 1', 'numpy 16777216'], done.stderr)
        self.assertEqual(lines[3:], ['fork denied 1', 'subprocess denied 1', 'posix_spawn denied 1',
                                     'execv denied 1', 'unshare denied 1'], done.stderr)

    def test_the_program_jumps_stay_inside_it(self):
        for machine in ('x86_64', 'aarch64'):
            code = process_filter.program(machine)
            for index, (_, jt, jf, _) in enumerate(code):
                self.assertLess(index + 1 + max(jt, jf), len(code) + (0 if jt or jf else 1))
        self.assertIsNone(process_filter.program('riscv64'))


if __name__ == '__main__':
    unittest.main()
