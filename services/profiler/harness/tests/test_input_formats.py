"""Kernel inputs in formats numpy lacks (bfloat16, float8_e4m3 / e5m2): the problem declares them
(problem.yaml nki_input_dtypes, or NKI_INPUT_DTYPES in the reference), the harness rounds those inputs onto the
format's grid, the kernel gets tensors of that format in both protocol steps, and step B takes the formats from the
problem, never from the program."""
import json
import os
import subprocess
import sys
import unittest

import numpy as np

from protocol.problem import ProblemError, load_problem
from protocol.replay import replay_check
from tests.support import STANDARD_TRANSFORMS, Workspace

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# x [128, 512] declared float8_e4m3, w [128, 512] declared bfloat16 (or as the test's metadata says)
REFERENCE = '''
def get_inputs():
    return [np.random.randn(128, 512).astype(np.float32) * 50, np.random.randn(128, 512).astype(np.float32)]


def forward(x, w):
    return x * w
''' + STANDARD_TRANSFORMS

# checks the formats it is given, as public fp8 kernels do
KERNEL = '''
@nki.jit
def kernel(x, w):
    assert x.dtype == nl.float8_e4m3, "x must be pre-quantized to dtype float8_e4m3"
    assert w.dtype == nl.bfloat16, "w must be bfloat16"
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    xt = nl.load(x)
    wt = nl.load(w)
    nl.store(out, value=nl.multiply(xt, wt, dtype=nl.float32))
    return out
'''
DECLARED = 'nki_input_dtypes: [float8_e4m3, bfloat16]\n'


class InputFormatTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.kernel = self.ws.kernel(KERNEL)

    def test_declared_fp8_and_bf16_inputs_pass_the_kernels_asserts_and_verify(self):
        # the reference's forward sees the rounded values: the default tolerance 2e-5 holds although fp8
        # rounding alone moves x by several percent
        result = self.ws.evaluate(self.ws.reference(REFERENCE, metadata=DECLARED), self.kernel, seeds=2)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['seeds_checked'], 2)
        self.assertLess(result['max_rel_l2'], 1e-6)

    def test_without_the_declaration_the_kernel_gets_float32_and_its_assert_fails(self):
        result = self.ws.evaluate(self.ws.reference(REFERENCE), self.kernel)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('must be pre-quantized to dtype float8_e4m3', result['message'])

    def test_module_constant_declares_the_formats_too(self):
        reference = self.ws.reference("NKI_INPUT_DTYPES = ['float8_e4m3', 'bfloat16']\n" + REFERENCE)
        result = self.ws.evaluate(reference, self.kernel)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_trace_dma_bytes_use_the_formats_element_size(self):
        trace = os.path.join(self.ws.root, 'formats.trace')
        result = self.ws.evaluate(self.ws.reference(REFERENCE, metadata=DECLARED), self.kernel, timing_only=True,
                                  trace_out=trace)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        with open(trace) as f:
            loads = [line.split() for line in f if ' op=load ' in line]
        fields = [dict(item.split('=', 1) for item in line[1:] if '=' in item) for line in loads]
        self.assertEqual([f['bytes'] for f in fields], [str(128 * 512 * 1), str(128 * 512 * 2)])
        self.assertEqual([f['in'] for f in fields], ['hbm:512', 'hbm:1024'])

    def test_inputs_are_rounded_onto_the_formats_grid(self):
        reference = self.ws.reference(REFERENCE, metadata='nki_input_dtypes: [float8_e4m3, bfloat16]\n')
        problem = load_problem(reference)
        x = np.array([[0.3, -1000.0, 0.001, 17.0]], np.float32)
        w = np.array([[1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 3.0, -0.1]], np.float32)
        w_view_of = w.copy()
        arrays, formats = problem.kernel_arrays([x, w_view_of[:, :]])
        # e4m3: 0.3 -> 0.3125 (step 2**-5), -1000 saturates at -240, 0.001 -> subnormal 2**-9 * 1, 17 -> 16 (tie
        # between 16 and 18 goes to the even mantissa)
        np.testing.assert_array_equal(arrays[0], np.array([[0.3125, -240.0, 2.0 ** -9, 16.0]], np.float32))
        # bf16 ties to even: 1 + 2**-8 -> 1, 1 + 3 * 2**-8 -> 1 + 2**-6
        self.assertEqual(arrays[1][0, 0], 1.0)
        self.assertEqual(arrays[1][0, 1], 1 + 2.0 ** -6)
        self.assertEqual([f.name for f in formats], ['float8_e4m3', 'bfloat16'])
        # float32 arrays are rounded in place (and so are the arrays they view): forward sees these values
        self.assertIs(arrays[0], x)
        self.assertEqual(w_view_of[0, 0], 1.0)
        # a float64 input is stored as float32 and written back rounded
        x64 = np.array([[0.3]], np.float64)
        stored = problem.kernel_arrays([x64, np.zeros((1, 1), np.float32)])[0][0]
        self.assertEqual(stored.dtype, np.float32)
        self.assertEqual(x64[0, 0], 0.3125)

    def bad(self, metadata=None, prefix=''):
        reference = self.ws.reference(prefix + REFERENCE, metadata=metadata)
        result = self.ws.evaluate(reference, self.kernel)
        self.assertEqual(result['verdict'], 'PROBLEM_ERROR', result['message'])
        self.assertIn(f'problem {os.path.splitext(os.path.basename(reference))[0]}', result['message'])
        return result['message']

    def test_unknown_dtype_name_is_a_problem_error_naming_the_problem(self):
        message = self.bad('nki_input_dtypes: [float8_e3m4, bfloat16]\n')
        self.assertIn("unknown dtype 'float8_e3m4'", message)

    def test_wrong_count_is_a_problem_error(self):
        message = self.bad('nki_input_dtypes: [float8_e4m3]\n')
        self.assertIn('declares 1 input format(s); transform_to_nki_inputs returned 2 array(s)', message)

    def test_a_declaration_that_is_not_a_list_or_declared_twice_is_a_problem_error(self):
        self.assertIn('must be a list', self.bad('nki_input_dtypes: float8_e4m3\n'))
        self.assertIn('declared twice', self.bad(DECLARED, prefix="NKI_INPUT_DTYPES = ['float32', 'float32']\n"))

    def test_numpy_names_must_match_the_array(self):
        message = self.bad('nki_input_dtypes: [float8_e4m3, float16]\n')
        self.assertIn('input 1 is declared float16 but is a float32 array', message)

    def test_load_problem_refuses_unknown_names_before_any_input_is_built(self):
        reference = self.ws.reference(REFERENCE, metadata='nki_input_dtypes: [fp8, null]\n')
        with self.assertRaises(ProblemError):
            load_problem(reference)


class ReplayTakesFormatsFromTheProblemTest(unittest.TestCase):
    """Step B builds the inputs in the problem's formats; a program whose header declares other formats is
    malformed, whichever way they differ."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def program(self, reference, kernel):
        path = os.path.join(self.ws.root, f'program_{self.ws.counter}.jsonl')
        subprocess.run([sys.executable, os.path.join(HARNESS, 'run_kernel.py'), '--problem', reference, '--kernel',
                        kernel, '--program-out', path], check=True)
        return path

    def test_header_formats_must_match_the_problems(self):
        declared = self.ws.reference(REFERENCE, metadata=DECLARED)
        plain = self.ws.reference(REFERENCE)
        program = self.program(declared, self.ws.kernel(KERNEL))
        with open(program) as f:
            self.assertEqual(json.loads(f.readline())['inputs'], [[[128, 512], 'float8_e4m3'],
                                                                  [[128, 512], 'bfloat16']])
        self.assertEqual(replay_check(reference=declared, program=program, seeds=1)['verdict'], 'OK')
        # the same fp8 program against a problem that gives float32 inputs
        result = replay_check(reference=plain, program=program, seeds=1)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('malformed program: the program declares inputs [128, 512] float8_e4m3', result['message'])
        # a float32 program (its kernel does not check the format) against the fp8 problem
        unchecked = self.ws.kernel(KERNEL.replace('    assert', '    # assert'))
        result = replay_check(reference=declared, program=self.program(plain, unchecked), seeds=1)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('the problem has [128, 512] float8_e4m3, [128, 512] bfloat16', result['message'])


if __name__ == '__main__':
    unittest.main()


# A test double of the Neuron SDK for run_neuron.py (no SDK here): `nki.baremetal` runs the kernel as plain Python
# on the arrays it is given and logs their dtypes; the fp8 and bfloat16 types are stand-in numpy types (the real
# SDK's are ml_dtypes types), distinct from float32 so the test sees the cast.
FAKE_SDK = {
    'neuronxcc/__init__.py': '',
    'neuronxcc/nki/__init__.py': '''import json
import os

from . import language


def jit(func=None, **options):
    return func if func is not None else (lambda f: f)


def baremetal(entry, **options):
    def run(*inputs):
        with open(os.environ['FAKE_SDK_LOG'], 'a') as log:
            log.write(json.dumps([str(a.dtype) for a in inputs]) + '\\n')
        return entry(*inputs)
    return run
''',
    'neuronxcc/nki/language.py': '''import numpy as np
float8_e4m3 = np.dtype(np.float16)
bfloat16 = np.dtype(np.float64)
''',
}

DEVICE_KERNEL = '''import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
    assert x.dtype == nl.float8_e4m3 and w.dtype == nl.bfloat16
    return x.astype(np.float32) * w.astype(np.float32)
'''


class DeviceInputFormatsTest(unittest.TestCase):
    """run_neuron.py (the hardware path) gives the kernel the declared formats as the simulator does, against a
    double of the Neuron SDK."""

    def test_declared_inputs_reach_the_device_kernel_rounded_and_in_the_sdk_types(self):
        ws = Workspace()
        self.addCleanup(ws.close)
        for path, text in FAKE_SDK.items():
            os.makedirs(os.path.join(ws.root, 'sdk', os.path.dirname(path)), exist_ok=True)
            ws.write(os.path.join('sdk', path), text)
        reference = ws.reference(REFERENCE, metadata='nki_input_dtypes: [float8_e4m3, bfloat16]\n')
        kernel = ws.write('device_kernel.py', DEVICE_KERNEL)
        log = os.path.join(ws.root, 'sdk.log')
        result_path = os.path.join(ws.root, 'result.json')
        env = dict(os.environ, PYTHONPATH=os.path.join(ws.root, 'sdk'), FAKE_SDK_LOG=log)
        subprocess.run([sys.executable, os.path.join(HARNESS, 'run_neuron.py'), '--problem', reference,
                        '--kernel', kernel, '--seeds', '1', '--warmups', '0', '--timed-runs', '1',
                        '--ntff-dir', os.path.join(ws.root, 'ntff'), '--neff-out', os.path.join(ws.root, 'k.neff'),
                        '--result-out', result_path], env=env, check=True, capture_output=True)
        with open(result_path) as f:
            result = json.load(f)
        # the reference computes on the rounded values, so the kernel's product matches it exactly
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['max_rel_l2'], 0.0)
        with open(log) as f:
            calls = [json.loads(line) for line in f]
        self.assertEqual(calls, [['float16', 'float64']] * 3)
