"""The profiling protocol's verdicts: correct kernels pass, and each failure mode gets its own verdict."""
import json
import os
import subprocess
import sys
import unittest

from protocol.evaluation import CHECK_SEEDS
from tests.support import DOUBLING_KERNEL, SIMPLE_REFERENCE, STANDARD_TRANSFORMS, Workspace, line_of

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), '..', '..', '..', 'examples')

BROKEN_REFERENCE = '''
def get_inputs():
    raise RuntimeError('dataset missing')


def forward(x):
    return x
''' + STANDARD_TRANSFORMS
HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Each program doubles its 32 rows of a (128, 64) input: the kernel alone (one program) leaves 96 rows unwritten;
# DOUBLE_ROWS_LAUNCHER launches it on its grid (indented, as Workspace.kernel dedents its body).
DOUBLE_ROWS_KERNEL = '''
            @nki.jit
            def nki_double_rows(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                rows = nl.ds(nl.program_id(0) * 32, 32)
                nl.store(out[rows, :], value=nl.multiply(nl.load(x[rows, :]), 2.0))
                return out
'''
DOUBLE_ROWS_LAUNCHER = '''
            def nki_double(x):
                return nki_double_rows[x.shape[0] // 32](x)
'''


class ProtocolTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.reference = self.ws.reference(SIMPLE_REFERENCE, metadata='''
            name: doubling
            parameters: {M: 128, N: 64}
            tolerance: 1.0e-5
            roofline: {vector_flops: "M*N", matmul_flops: 0, hbm_bytes: "2*M*N*4"}
            ''')

    def tearDown(self):
        self.ws.close()

    def test_correct_kernel_is_ok_with_problem_metadata(self):
        trace_path = os.path.join(self.ws.root, 'ok.trace')
        result = self.ws.evaluate(self.reference, self.ws.kernel(DOUBLING_KERNEL), seeds=5, trace_out=trace_path)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['seeds_checked'], 5)
        self.assertEqual(result['max_rel_l2'], 0.0)
        self.assertEqual(result['instructions'], 3)
        self.assertEqual(result['trace'], trace_path)
        self.assertTrue(os.path.exists(trace_path))
        self.assertEqual(result['problem'], {'name': 'doubling', 'tolerance': 1e-5, 'roofline': {
            'vector_flops': 8192, 'matmul_flops': 0, 'hbm_bytes': 65536}})

    def test_output_bytes_are_what_the_outputs_need_on_the_device(self):
        # (the worker's plausibility check compares them with the bytes the timed run wrote to HBM)
        result = self.ws.evaluate(self.reference, self.ws.kernel(DOUBLING_KERNEL))
        self.assertEqual(result['output_bytes'], 128 * 64 * 4)
        # a bfloat16 output, stored wider in the simulator, needs 2 bytes per element
        bf16 = self.ws.evaluate(self.ws.reference(SIMPLE_REFERENCE, metadata='tolerance: 1.0e-2\n'),
                                self.ws.kernel(DOUBLING_KERNEL.replace('dtype=x.dtype', 'dtype=nl.bfloat16')))
        self.assertEqual(bf16['verdict'], 'OK', bf16['message'])
        self.assertEqual(bf16['output_bytes'], 128 * 64 * 2)
        # an argument updated in place and returned needs only the part the kernel wrote
        in_place = self.ws.reference('''
def get_inputs():
    return [np.random.rand(128, 64).astype(np.float32)]


def forward(x):
    y = x.copy()
    y[:32] *= np.float32(2.0)
    return y
''' + STANDARD_TRANSFORMS)
        result = self.ws.evaluate(in_place, self.ws.kernel('''
            @nki.jit
            def kernel(x):
                nl.store(x[0:32, :], value=nl.multiply(nl.load(x[0:32, :]), 2.0))
                return x
            '''))
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['output_bytes'], 32 * 64 * 4)

    def test_wrong_values_are_incorrect(self):
        path = self.ws.kernel(DOUBLING_KERNEL.replace('2.0', '2.001'))
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'INCORRECT')
        self.assertIn('relative L2 error', result['message'])
        self.assertGreater(result['max_rel_l2'], 1e-4)

    def test_wrong_output_shape_is_incorrect(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 32), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x[:, 0:32]))
                return out
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'INCORRECT')
        self.assertIn('(128, 32)', result['message'])

    def test_nan_output_fails_explicitly(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.log(nl.multiply(nl.load(x), -1e30)))
                return out
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'INCORRECT')
        self.assertIn('NaN', result['message'])

    def test_non_finite_values_of_the_reference_must_be_reproduced(self):
        # log of an input with exact zeros: the reference holds -inf there (as a causal mask's scores do)
        reference = self.ws.reference('''
def get_inputs():
    x = np.abs(np.random.normal(size=(128, 64))).astype(np.float32)
    x[:, ::7] = 0.0
    return [x]


def forward(x):
    with np.errstate(divide='ignore'):
        return np.log(x)
''' + STANDARD_TRANSFORMS)
        log_kernel = '''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.log(ARG))
                return out
            '''
        same = self.ws.evaluate(reference, self.ws.kernel(log_kernel.replace('ARG', 'nl.load(x)')))
        self.assertEqual(same['verdict'], 'OK', same['message'])
        # finite where the reference is -inf
        shifted = self.ws.evaluate(reference, self.ws.kernel(log_kernel.replace('ARG', 'nl.add(nl.load(x), 1e-30)')))
        self.assertEqual(shifted['verdict'], 'INCORRECT')
        self.assertIn("output 0: 1280 of the reference's 1280 NaN / Inf value(s) differ in the kernel output",
                      shifted['message'])
        # -inf where the reference is finite
        negated = self.ws.evaluate(reference, self.ws.kernel(log_kernel.replace('ARG', 'nl.multiply(nl.load(x), 0.0)')))
        self.assertEqual(negated['verdict'], 'INCORRECT')
        self.assertIn('Inf value(s) where the reference is finite', negated['message'])

    def test_constant_output_is_incorrect(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.sbuf)
                t[...] = 0.5
                nl.store(out, value=t)
                return out
            ''')
        self.assertEqual(self.ws.evaluate(self.reference, path)['verdict'], 'INCORRECT')

    def test_the_fresh_seed_is_drawn_per_run_unless_given(self):
        reference = os.path.join(EXAMPLES, 'silu', 'reference_small.py')
        kernel = os.path.join(EXAMPLES, 'silu', 'kernel.py')
        drawn = [self.ws.evaluate(reference, kernel, fresh_seed=None)['fresh_seed'] for _ in range(2)]
        self.assertNotEqual(drawn[0], drawn[1])
        self.assertFalse(set(drawn) & set(CHECK_SEEDS))
        self.assertEqual(self.ws.evaluate(reference, kernel, fresh_seed=7)['fresh_seed'], 7)

    def test_kernel_caching_results_fails_on_fresh_inputs(self):
        path = self.ws.kernel('''
            import numpy as _np
            _CACHE = {}

            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if 'value' not in _CACHE:
                    _np.random.seed(0)
                    _CACHE['value'] = _np.random.normal(size=(128, 64)).astype(_np.float32) * 2.0
                nl.store(out, value=nl.multiply(nl.load(x), 0.0))
                out_data = _CACHE['value']
                return out_data
            ''')
        result = self.ws.evaluate(self.reference, path, seeds=1)
        self.assertEqual(result['verdict'], 'INCORRECT')
        self.assertEqual(result['seeds_checked'], 1)
        self.assertIn('fresh inputs', result['message'])

    def test_kernel_exception_is_runtime_error_with_kernel_line(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                values = [1, 2]
                return values[5]  # <- here
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertEqual(result['line'], line_of(path, '# <- here'))
        self.assertIn('IndexError', result['message'])
        self.assertIn('return values[5]', result['message'])

    def test_broken_reference_is_a_problem_error(self):
        # The job's reference is at fault, not the kernel or the worker: a verdict the pool does not re-dispatch.
        reference = self.ws.reference(BROKEN_REFERENCE)
        result = self.ws.evaluate(reference, self.ws.kernel(DOUBLING_KERNEL))
        self.assertEqual(result['verdict'], 'PROBLEM_ERROR')
        self.assertIn('dataset missing', result['message'])

    def test_reference_without_the_problem_functions_is_a_problem_error(self):
        reference = self.ws.reference('import numpy as np\n\ndef forward(x):\n    return x\n')
        result = self.ws.evaluate(reference, self.ws.kernel(DOUBLING_KERNEL))
        self.assertEqual(result['verdict'], 'PROBLEM_ERROR')
        self.assertIn('get_inputs', result['message'])

    def test_a_reference_of_ones_own_may_leave_out_the_transforms(self):
        # get_inputs and forward only: the kernel takes the inputs and its outputs are compared as they are
        plain = SIMPLE_REFERENCE.replace(STANDARD_TRANSFORMS, '')
        self.assertNotIn('transform', plain)
        result = self.ws.evaluate(self.ws.reference(plain), self.ws.kernel(DOUBLING_KERNEL))
        self.assertEqual(result['verdict'], 'OK', result['message'])
        halving = DOUBLING_KERNEL.replace('2.0', '0.5')
        result = self.ws.evaluate(self.ws.reference(plain), self.ws.kernel(halving))
        self.assertEqual(result['verdict'], 'INCORRECT')

    def test_a_transform_that_is_not_a_function_is_a_problem_error(self):
        reference = self.ws.reference(SIMPLE_REFERENCE.replace(STANDARD_TRANSFORMS, '') +
                                      '\ntransform_nki_outputs = None\n')
        result = self.ws.evaluate(reference, self.ws.kernel(DOUBLING_KERNEL))
        self.assertEqual(result['verdict'], 'PROBLEM_ERROR')
        self.assertIn('transform_nki_outputs is not a function', result['message'])

    def test_missing_entry_point_is_compile_error(self):
        path = self.ws.kernel('def helper():\n    return 1\n')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR')
        self.assertIn('optimized_kernel', result['message'])

    def test_the_one_nki_kernel_of_a_file_without_kernel_is_the_entry_point(self):
        one = DOUBLING_KERNEL.replace('def kernel(x):', 'def nki_double(x):')
        result = self.ws.evaluate(self.reference, self.ws.kernel(one + '    alias = nki_double\n'))
        self.assertEqual(result['verdict'], 'OK', result['message'])
        two = one + one.replace('def nki_double(x):', 'def nki_triple(x):').replace('2.0', '3.0')
        result = self.ws.evaluate(self.reference, self.ws.kernel(two))
        self.assertEqual(result['verdict'], 'COMPILE_ERROR')
        self.assertIn('defines neither `kernel` nor `optimized_kernel`, and 2 NKI kernels (nki_double, '
                      'nki_triple): name the one to run with `kernel = <name>`', result['message'])

    def test_a_sub_kernel_another_kernel_calls_is_no_entry_point(self):
        nested = self.ws.kernel('''
            @nki.jit
            def _scale_tile(x_tile, factor):
                return nl.multiply(x_tile, factor)

            @nki.jit
            def nki_double(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=_scale_tile(nl.load(x), 2.0))
                return out
            ''')
        result = self.ws.evaluate(self.reference, nested)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_the_one_grid_launcher_of_a_file_without_kernel_is_the_entry_point(self):
        # each program doubles its 32 rows: the kernel alone (one program) would leave 96 rows unwritten
        launched = self.ws.kernel(DOUBLE_ROWS_KERNEL + DOUBLE_ROWS_LAUNCHER)
        result = self.ws.evaluate(self.reference, launched)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['instructions'], 4 * 3)

    def test_a_grid_launcher_only_the_main_block_calls_is_still_the_entry_point(self):
        # the SDK's SPMD tensor addition tutorial: its caller nki_tensor_add launches the kernel on a grid and only
        # its __main__ block calls it. Before round 33 the caller was taken for host-only code, its body stubbed,
        # and the kernel ran as one program: INCORRECT, 96 of 128 rows "never written by any instruction"
        launched = self.ws.kernel(DOUBLE_ROWS_KERNEL + DOUBLE_ROWS_LAUNCHER + '''
            def timed(kernel, x):     # a parameter named kernel binds no entry point
                return kernel(x)

            if __name__ == "__main__":
                print(timed(nki_double, np.ones((128, 64), dtype=np.float32)))
            ''')
        result = self.ws.evaluate(self.reference, launched)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['instructions'], 4 * 3)

    def test_the_one_literal_grid_launch_of_the_main_block_is_the_launch_run(self):
        # the SDK's mm-nisa-spmd.py launches its kernel on [4, 2] only in its __main__ block, which never runs
        # (before round 33 the kernel ran as one program: INCORRECT, "N element(s) never written by any
        # instruction"); that one launch of int literals is the launch the loader runs now
        launched = self.ws.kernel(DOUBLE_ROWS_KERNEL + '''
            if __name__ == "__main__":
                print(nki_double_rows[4](np.ones((128, 64), dtype=np.float32)))
            ''')
        result = self.ws.evaluate(self.reference, launched)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['instructions'], 4 * 3)

    def test_a_main_block_launch_on_a_computed_grid_is_named_when_rows_stay_unwritten(self):
        # a grid the __main__ block computes is not taken (nothing of the block runs): the kernel runs as one
        # program, and the verdict names the launch to write as the entry point
        body = DOUBLE_ROWS_KERNEL + '''
            if __name__ == "__main__":
                x = np.ones((128, 64), dtype=np.float32)
                print(nki_double_rows[x.shape[0] // 32](x))
            '''
        result = self.ws.evaluate(self.reference, self.ws.kernel(body))
        self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
        self.assertIn('6144 element(s) never written by any instruction (the file launches '
                      'nki_double_rows[x.shape[0] // 32] only in its __main__ block, which the simulator does not run, '
                      'so its kernel ran as one program: name the launch as the entry point with '
                      '`kernel = nki_double_rows[x.shape[0] // 32]`)', result['message'])
        named = body.rstrip(' ') + '            kernel = nki_double_rows[4]\n'
        result = self.ws.evaluate(self.reference, self.ws.kernel(named))
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_a_launch_of_a_kernel_imported_from_a_sibling_file_is_named(self):
        # the SDK's multiple-core tensor addition imports its kernel from the tutorial's other file; submitted
        # alone, the file has no kernel (before: "defines neither `kernel` nor `optimized_kernel` (nor one function
        # decorated with @nki.jit)", the import not named)
        launched = self.ws.kernel('''
            from spmd_tensor_addition_nki_kernels import nki_tensor_add_kernel_

            def nki_tensor_add_nc2(a, b):
                return nki_tensor_add_kernel_[nl.spmd_dim(a.shape[0] // 256, nl.nc(2)), 1](a, b)

            if __name__ == "__main__":
                nki_tensor_add_nc2(np.ones((256, 512)), np.ones((256, 512)))
            ''')
        result = self.ws.evaluate(self.reference, launched)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn("nki_tensor_add_nc2 calls nki_tensor_add_kernel_, which the file imports from module "
                      "'spmd_tensor_addition_nki_kernels': the simulator runs the one kernel file it is given",
                      result['message'])

    def test_a_file_that_is_one_undecorated_kernel_runs_that_kernel(self):
        # the NKI getting-started form, kept by workshop notebooks in a cell of its own (the next cell wraps it with
        # baremetal(...)): one plain function writing an output argument, nothing else in the file naming it but
        # the __main__ block (before: "defines neither `kernel` nor `optimized_kernel` (nor one function decorated
        # with @nki.jit)", the function taken for host code that nothing calls)
        reference = self.ws.reference(SIMPLE_REFERENCE.replace(
            'return inputs', 'return [inputs[0], np.zeros_like(inputs[0])]'))
        lone = self.ws.kernel('''
            def nki_doubling(x, out):
                assert x.shape == out.shape
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))

            if __name__ == "__main__":
                nki.baremetal(nki_doubling)(np.ones((4, 3)), np.zeros((4, 3)))
            ''')
        result = self.ws.evaluate(reference, lone)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['max_rel_l2'], 0.0)
        # a `kernel = ...` that only the __main__ block binds never runs, so the file still binds no entry point (a
        # blog's matmul wraps its kernel with `kernel = PyTorchXLAKernel(func=matmul)` there; round 46b, before:
        # "defines neither `kernel` nor `optimized_kernel`")
        wrapped = self.ws.kernel('''
            def nki_doubling(x, out):
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))

            if __name__ == "__main__":
                kernel = nki.baremetal(nki_doubling)
                kernel(np.ones((4, 3)), np.zeros((4, 3)))
            ''')
        result = self.ws.evaluate(reference, wrapped)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        # the function's body is checked as kernel code, no longer stubbed as host code
        host = self.ws.kernel('''
            def nki_doubling(x, out):
                import torch
                nl.store(out, value=nl.multiply(nl.load(x), torch.tensor(2.0)))
            ''')
        result = self.ws.evaluate(reference, host)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch', result['message'])
        # with a second function the file is no longer one kernel: the entry must still be named
        two = self.ws.kernel('''
            def nki_doubling(x, out):
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))

            def nki_tripling(x, out):
                nl.store(out, value=nl.multiply(nl.load(x), 3.0))
            ''')
        result = self.ws.evaluate(reference, two)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('defines neither `kernel` nor `optimized_kernel`', result['message'])

    def test_a_numpy_array_the_launcher_makes_is_named_when_the_launched_kernel_fails_on_it(self):
        # the Beta 1 tensor addition tutorial's caller allocates its output with np.zeros and passes it to an
        # nki.baremetal launch; the caller runs here as the kernel, so the array is no HBM tensor (before: numpy's
        # IndexError, RUNTIME_ERROR, naming nothing of the cause)
        launched = self.ws.kernel('''
            def nki_double_rows(x, out):
                rows = nl.program_id(0) * 32 + nl.arange(32)[:, None]
                cols = nl.arange(x.shape[1])[None, :]
                nl.store(out[rows, cols], value=nl.multiply(nl.load(x[rows, cols]), 2.0))

            def nki_double(x):
                out = np.zeros(x.shape, dtype=np.float32)
                nki.baremetal(nki_double_rows)[x.shape[0] // 32](x, out)  # <- here
                return out

            kernel = nki_double
            ''')
        result = self.ws.evaluate(self.reference, launched)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('nki_double_rows[4]: argument 2 of the launch is a numpy array, not an HBM tensor',
                      result['message'])
        self.assertEqual(result['line'], line_of(launched, '# <- here'))

    def test_memory_error_is_out_of_memory(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                raise MemoryError()
            ''')
        self.assertEqual(self.ws.evaluate(self.reference, path)['verdict'], 'OUT_OF_MEMORY')

    def test_cli_writes_json_and_trace_in_timing_only_mode(self):
        result_path = os.path.join(self.ws.root, 'result.json')
        trace_path = os.path.join(self.ws.root, 'cli.trace')
        completed = subprocess.run(
            ['/usr/bin/python3', os.path.join(HARNESS, 'run_kernel.py'), '--problem', self.reference,
             '--kernel', self.ws.kernel(DOUBLING_KERNEL), '--timing-only', '--trace-out', trace_path,
             '--result-out', result_path], capture_output=True, text=True, timeout=120)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        with open(result_path) as f:
            result = json.load(f)
        self.assertEqual(json.loads(completed.stdout), result)
        self.assertEqual(result['verdict'], 'OK')
        self.assertEqual(result['seeds_checked'], 0)
        with open(trace_path) as f:
            self.assertEqual(f.readline(), 'accelopt-trace 1\n')


if __name__ == '__main__':
    sys.exit(unittest.main())


class LowPrecisionToleranceTest(unittest.TestCase):
    """The default tolerance widens to 4 machine epsilons for a float16 reference output (the reference's dtype
    decides, never the kernel's); an explicit tolerance is kept."""

    def test_float16_reference_output(self):
        import numpy as np
        from protocol.comparison import compare
        want = np.linspace(1, 2, 4096).astype(np.float16)
        close = (want.astype(np.float64) * (1 + 1e-3)).astype(np.float32)
        far = (want.astype(np.float64) * (1 + 1e-2)).astype(np.float32)
        keep = (lambda k, r: k)
        self.assertTrue(compare(close, want, keep, 2e-5, widen=True).ok)
        self.assertFalse(compare(close, want, keep, 2e-5).ok)
        self.assertFalse(compare(far, want, keep, 2e-5, widen=True).ok)
        self.assertFalse(compare(close.astype(np.float16), want.astype(np.float32), keep, 2e-5, widen=True).ok)
