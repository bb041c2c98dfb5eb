"""A kernel's modules are KernelModule views (protocol/kernel_modules.py): every attribute of numpy and NKI as it is,
except a module a kernel may not import, which numpy's and the simulator's own modules would otherwise hand out."""
import textwrap
import unittest

import numpy

from protocol.kernel_modules import KernelModule
from protocol.kernel_source import KernelSource
from protocol.recording import record
from tests.support import DOUBLING_KERNEL, SIMPLE_REFERENCE, Workspace

# A module reached through an allowed one: (kernel line, part of the refusal). Each passes the static rules
# (no forbidden name appears), and before the views each reached the host's module.
REACHES = {
    # operator.attrgetter('__globals__') reads what the private-attribute rule forbids: __builtins__, __import__
    'operator through numpy': ("get = np.core.numeric.operator.attrgetter('name')",
                               "cannot use module 'operator' (reached as numpy.core.numeric.operator)"),
    'types through numpy': ('t = np.lib.utils.types.FunctionType', "cannot use module 'types'"),
    # npy_load_module runs a file the kernel wrote as a module, outside every static rule
    'module loading through numpy.compat': ("np.compat.npy_load_module('m', 'm.py')",
                                            "cannot use module 'numpy.compat'"),
    'pickle through numpy.compat': ('p = np.compat.py3k.pickle', "cannot use module 'numpy.compat'"),
    # measure evaluates a string in the caller's globals
    'numpy.testing.measure': ("np.testing.measure('1', 1)", "of module 'numpy.testing' that start with 'assert', "
                              "not 'measure'"),
    'numpy.testing.extbuild': ('b = np.testing.extbuild', "not 'extbuild'"),
    'the simulator module reaching numpy': ('get = nl.np.core.numeric.operator.itemgetter',
                                            "cannot use module 'operator'"),
    'the simulator module reaching time': ('t = nisa.time.time', "cannot use module 'time'"),
}


class KernelModulesTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.reference = self.ws.reference(SIMPLE_REFERENCE)

    def tearDown(self):
        self.ws.close()

    def test_no_host_module_is_reached_through_an_allowed_one(self):
        for name, (statement, refusal) in REACHES.items():
            with self.subTest(name):
                path = self.ws.kernel(f'''
                    @nki.jit
                    def kernel(x):
                        {statement}
                        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                        nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                        return out
                    ''')
                result = self.ws.evaluate(self.reference, path)
                self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result)
                self.assertEqual(result['line'], 8)
                self.assertIn('NKI kernels ', result['message'])
                self.assertIn(refusal, result['message'])

    def test_an_import_of_a_host_module_of_numpy_is_refused(self):
        for statement in ('from numpy import compat', 'from numpy.compat import pickle',
                          'from numpy.testing import measure'):
            with self.subTest(statement):
                path = self.ws.kernel(statement + '\n' + textwrap.dedent(DOUBLING_KERNEL))
                result = self.ws.evaluate(self.reference, path)
                self.assertEqual(result['verdict'], 'COMPILE_ERROR', result)
                self.assertRegex(result['message'], "NKI kernels (cannot use module 'numpy.compat'|may use only)")

    def test_the_views_hand_out_the_modules_own_objects(self):
        path = self.ws.kernel(textwrap.dedent('''
            import math
            from functools import reduce
            from collections import namedtuple
            import neuronxcc.nki.isa.constants as constants
            from numpy import linalg

            Shape = namedtuple('Shape', 'rows cols')
            np.testing.assert_allclose(np.ones(2), np.ones(2))
            ''') + textwrap.dedent(DOUBLING_KERNEL))
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        entry = KernelSource(path).load_entry_point()
        bound = getattr(entry, 'func', entry).__globals__
        for name in ('np', 'nki', 'nl', 'nisa', 'math', 'constants', 'linalg'):
            self.assertIsInstance(bound[name], KernelModule, name)
        self.assertIs(bound['np'].float32, numpy.float32)
        self.assertIs(bound['linalg'].norm, numpy.linalg.norm)
        self.assertIs(bound['np'].random.default_rng, numpy.random.default_rng)
        self.assertIs(bound['nl'], bound['nki'].language)     # one view per module
        self.assertEqual(bound['Shape'](1, 2).cols, 2)

    def test_a_kernel_loaded_again_reads_the_api_of_its_own_recording(self):
        # each recording wraps the simulator's API functions anew (nki_sim/program.py, Recording): a view that kept
        # the first recording's `nl.load` made the second program fail ("a tensor that no recorded NKI call
        # created"); so a second profile in one process, and tests that record in process, need fresh views
        kernel = self.ws.kernel(DOUBLING_KERNEL)
        programs = []
        for run in range(2):
            out = self.ws.write(f'program_{run}.txt', '')
            record(self.reference, kernel, out)
            with open(out) as f:
                programs.append(f.read())
        self.assertNotIn('"error"', programs[1])
        self.assertIn('"c":"nl.load"', programs[1])
        self.assertEqual(programs[0], programs[1])


if __name__ == '__main__':
    unittest.main()
