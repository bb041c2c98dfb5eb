"""Every kernel of the numerics, trace and compile-rule suites, recorded on shapes and replayed on the test's
inputs, passes the same assertions and writes the same trace as the direct simulation."""
import io
import unittest
from unittest import mock

import numpy as np

from nki_sim.jit import simulate
from nki_sim.program import Recorder, Recording, Replay, parse_program, record_program
from protocol.problem import load_module
from tests import support

SUITES = ('tests.test_numerics', 'tests.test_trace', 'tests.test_compile_rules', 'tests.test_language')


class ReplayEquivalenceTest(unittest.TestCase):
    def test_suites_pass_through_record_and_replay(self):
        differing = []

        def replayed_run(workspace, kernel_path, *inputs, timing_only=False):
            out = io.StringIO()
            recorder = Recorder(out)
            with Recording(recorder):
                entry = _entry(load_module(kernel_path, f'recorded_kernel_{workspace.counter}'))
                record_program(entry, list(inputs), recorder)
            replay = Replay(parse_program(out.getvalue().splitlines()))
            arrays = [a for a in inputs if isinstance(a, np.ndarray)]
            outputs, trace, _ = replay.run(arrays, timing_only, check_coverage=False)
            direct = _entry(load_module(kernel_path, f'direct_kernel_{workspace.counter}'))
            if simulate(direct, list(inputs), timing_only=timing_only)[1].text() != trace.text():
                differing.append(kernel_path)
            return outputs, trace

        suite = unittest.defaultTestLoader.loadTestsFromNames(SUITES)
        result = unittest.TestResult()
        with mock.patch.object(support.Workspace, 'run', replayed_run):
            suite.run(result)
        problems = [f'{test}: {trace.splitlines()[-1]}' for test, trace in result.failures + result.errors]
        self.assertEqual(problems, [])
        self.assertGreater(result.testsRun, 10)
        self.assertEqual(differing, [])


def _entry(module):
    return getattr(module, 'kernel', None) or module.optimized_kernel


if __name__ == '__main__':
    unittest.main()
