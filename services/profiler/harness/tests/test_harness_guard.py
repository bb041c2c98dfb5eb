"""The audit hook of harness_guard.py, outside the sandbox: each script stands for kernel code run under the hook
(in a child process, since an audit hook cannot be removed), with the marker written into a temporary directory
instead of /scratch. The hostile kernels of the C++ suite (services/profiler/testdata/hostile) run it in the real
sandbox."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The child: imports ctypes and numpy as the harness does before any kernel code runs, installs the hook for the
# kernel file, and runs it.
RUNNER = '''
import ctypes, runpy, sys
import numpy
sys.path.insert(0, {harness!r})
import harness_guard
harness_guard.SCRATCH = {scratch!r}
harness_guard.MARKER = {marker!r}
harness_guard._install({kernel!r})
runpy.run_path({kernel!r})
'''


class HarnessGuardTest(unittest.TestCase):
    def run_under_guard(self, body):
        with tempfile.TemporaryDirectory(prefix='harness-guard-test-') as scratch:
            kernel = os.path.join(scratch, 'kernel.py')
            with open(kernel, 'w') as f:
                f.write(textwrap.dedent(body))
            marker = os.path.join(scratch, 'violation.json')
            runner = RUNNER.format(harness=HARNESS, scratch=scratch, marker=marker, kernel=os.path.realpath(kernel))
            done = subprocess.run([sys.executable, '-c', runner], capture_output=True, text=True, timeout=60,
                                  cwd=scratch, check=False)
            found = None
            if os.path.exists(marker):
                with open(marker) as f:
                    found = json.load(f)
            self.files = sorted(os.listdir(scratch))
            return done, found

    def test_a_symbol_looked_up_through_the_imported_ctypes_module_is_refused(self):
        done, marker = self.run_under_guard('''
            import sys
            ctypes = sys.modules['ctypes']
            ctypes.pythonapi.Py_GetVersion
            ''')
        self.assertNotEqual(done.returncode, 0)
        self.assertIn('SandboxViolation', done.stderr)
        self.assertEqual(marker['event'], 'ctypes.dlsym')
        self.assertEqual(marker['line'], 4)

    def test_a_raw_address_wrapped_as_ctypes_data_is_refused(self):
        done, marker = self.run_under_guard('''
            import sys
            ctypes = sys.modules['ctypes']
            ctypes.c_char.from_address(id(sys))
            ''')
        self.assertNotEqual(done.returncode, 0)
        self.assertEqual(marker['event'], 'ctypes.cdata')

    def test_unpickling_a_payload_the_kernel_wrote_is_refused_before_it_runs(self):
        done, marker = self.run_under_guard('''
            import numpy as np
            np.frombuffer(b'cos\\nsystem\\n(Vtouch ran\\ntR.', dtype=np.uint8).tofile('payload.pkl')
            np.load('payload.pkl', allow_pickle=True)
            ''')
        self.assertNotEqual(done.returncode, 0)
        self.assertEqual(marker['event'], 'pickle.find_class')
        self.assertEqual(marker['detail'], 'unpickling os.system')
        self.assertNotIn('ran', self.files)      # os.system never ran

    def test_running_a_module_the_kernel_wrote_is_refused_before_it_runs(self):
        # numpy.compat.npy_load_module, which a kernel cannot reach through its imports (protocol/kernel_modules.py)
        done, marker = self.run_under_guard('''
            import numpy as np
            np.frombuffer(b'open("ran", "w")\\n', dtype=np.uint8).tofile('loaded.py')
            np.compat.npy_load_module('loaded', 'loaded.py')
            ''')
        self.assertNotEqual(done.returncode, 0)
        self.assertEqual(marker['event'], 'exec')
        self.assertEqual(marker['detail'], 'running code from loaded.py')
        self.assertEqual(marker['line'], 4)
        self.assertNotIn('ran', self.files)

    def test_ordinary_kernel_python_raises_nothing(self):
        # numpy work, a dataclass (built with exec), a standard module imported for the first time (its bytecode
        # read with marshal), a copy of a nested structure: none of these is an operation the hook refuses
        done, marker = self.run_under_guard('''
            import copy
            import dataclasses
            import fractions
            import numpy as np

            @dataclasses.dataclass
            class Tiling:
                rows: int
                cols: int

            t = copy.deepcopy([Tiling(128, 512), {'a': (1, 2)}])
            x = np.arange(12, dtype=np.float32).reshape(3, 4)
            assert float((x @ x.T).sum()) > 0 and fractions.Fraction(1, 3) * 3 == 1 and t[0].rows == 128
            ''')
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIsNone(marker)


if __name__ == '__main__':
    unittest.main()
