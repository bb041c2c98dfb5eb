"""Cheat classes against the two-process protocol: each kernel tries to get OK without computing its output
through traced instructions, and each must end non-OK (at the small and the realistic silu shape)."""
import os
import unittest

from tests.support import Workspace

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), '..', '..', '..',
                        'examples', 'silu')
SHAPES = {'small': os.path.join(EXAMPLES, 'reference_small.py'), 'realistic': os.path.join(EXAMPLES, 'reference.py')}

# Kernels get the silu input x [M, N] and must return silu(x). Each one issues a 1x1 load/store (or a partial
# store) so it has a trace, and cheats on the rest.
ONE_BY_ONE = '''
    def token_store(out, x):
        tile = nl.load(x[0:1, 0:1])
        nl.store(out[0:1, 0:1], value=nl.multiply(tile, nl.sigmoid(tile)))
'''
CHEATS = {
    'numpy_into_output_backing_array': ONE_BY_ONE + '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for tensor in (x, out):
            data = tensor.hbm_alloc.data
            if data is not None:
                xs = x.hbm_alloc.data.astype(np.float64)
                out.hbm_alloc.data[...] = (xs / (1 + np.exp(-xs))).astype(np.float32).reshape(-1)
        token_store(out, x)
        return out
    ''',
    'patched_comparison': ONE_BY_ONE + '''
    import sys
    comparison = [m for m in list(sys.modules.values()) if hasattr(m, 'Comparison')]
    for module in list(sys.modules.values()):
        if comparison and callable(getattr(module, 'compare', None)):
            module.compare = lambda *args, **kwargs: comparison[0].Comparison(True, 0.0)

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        token_store(out, x)
        return out
    ''',
    'patched_reference_forward_and_np_dot': ONE_BY_ONE + '''
    import sys
    np.dot = lambda a, b: 0.0
    for module in list(sys.modules.values()):
        if hasattr(module, 'forward') and hasattr(module, 'get_inputs'):
            module.forward = lambda x: np.zeros_like(x)

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        token_store(out, x)
        return out
    ''',
    'rewrites_program_and_trace_at_exit': ONE_BY_ONE + '''
    import atexit, os, sys

    def forge():
        program = sys.argv[sys.argv.index('--program-out') + 1]
        with open(program) as f:
            lines = f.readlines()
        with open(program, 'w') as f:
            f.writelines(lines[:len(lines) // 2])
        with open(os.path.join(os.path.dirname(program), 'trace.txt'), 'w') as f:
            f.write('accelopt-trace 1\\n')
    atexit.register(forge)

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        M, N = x.shape
        for i in nl.affine_range(M // 128):
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.load(x[i * 128:(i + 1) * 128, :]))
        return out
    ''',
    'forges_result_json_at_exit': ONE_BY_ONE + '''
    import atexit, json, os, sys

    def forge():
        flag = '--program-out' if '--program-out' in sys.argv else '--result-out'
        folder = os.path.dirname(sys.argv[sys.argv.index(flag) + 1])
        with open(os.path.join(folder, 'result.json'), 'w') as f:
            json.dump({'verdict': 'OK', 'message': '', 'line': 0, 'seeds_checked': 5, 'max_rel_l2': 0.0,
                       'instructions': 1, 'trace': None, 'problem': None, 'wall_seconds': 0.0,
                       'trace_seconds': 0.0, 'trace_cpu_seconds': 0.0}, f)
    atexit.register(forge)

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        token_store(out, x)
        return out
    ''',
    'disables_the_audit_hook': ONE_BY_ONE + '''
    import gc
    for holder in gc.get_objects():
        if isinstance(holder, dict) and holder.get('reported') is False:
            holder['reported'] = True

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        token_store(out, x)
        return out
    ''',
    'constant_output': '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        M, N = x.shape
        for i in nl.affine_range(M // 128):
            tile = nl.full((128, N), 0.25, dtype=nl.float32)
            nl.store(out[i * 128:(i + 1) * 128, :], value=tile)
        return out
    ''',
    'stale_output_kept_across_calls': '''
    CACHE = []

    @nki.jit
    def kernel(x):
        if CACHE:
            return CACHE[0]
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        M, N = x.shape
        for i in nl.affine_range(M // 128):
            tile = nl.load(x[i * 128:(i + 1) * 128, :])
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(tile, nl.sigmoid(tile)))
        CACHE.append(out)
        return x
    ''',
    'writes_only_part_of_the_output': '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        tile = nl.load(x[0:128, :])
        nl.store(out[0:128, :], value=nl.multiply(tile, nl.sigmoid(tile)))
        return out
    ''',
}


# Correct for the inputs of every seed the protocol is known to use, and wrong for any other: at trace time the
# kernel rebuilds the problem's inputs for those seeds (as the caller seeds numpy before get_inputs), embeds the
# answers as constants, and selects one at run time by a traced comparison of the input's first column.
KNOWN_SEED_ANSWERS = '''
    PUBLIC_SEEDS = (0, 21, 42, 63, 84, 105)

    @nki.jit
    def kernel(x):
        M, N = x.shape
        out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
        keys, answers = [], []
        for seed in PUBLIC_SEEDS:
            np.random.seed(seed)
            xs = np.random.randn(M, N).astype(np.float32)
            keys.append(nl.shared_constant(xs[:, 0:1].copy()))
            answers.append(nl.shared_constant((xs / (1.0 + np.exp(-xs))).astype(np.float32)))
        for i in nl.affine_range(M // 128):
            probe = nl.load(x[i * 128:(i + 1) * 128, 0:1])
            picked = nl.zeros((128, N), dtype=nl.float32)
            for key, answer in zip(keys, answers):
                hit = nl.equal(probe, nl.load(key[i * 128:(i + 1) * 128, 0:1]), dtype=nl.float32)
                picked = nl.add(picked, nl.multiply(nl.load(answer[i * 128:(i + 1) * 128, :]), hit))
            nl.store(out[i * 128:(i + 1) * 128, :], value=picked)
        return out
'''

# A relative NEAR off on the public check seeds' inputs (recognised by their first column), and a relative RELAXED
# off everywhere else: an approximation patched for the inputs it knows (NEAR 0: exact there). The silu problem's
# tolerance is 2e-5.
KNOWN_SEEDS_RELAXED = '''
    CHECK_SEEDS = (0, 21, 42, 63, 84)
    RELAXED = {relaxed}
    NEAR = {near}

    @nki.jit
    def kernel(x):
        M, N = x.shape
        out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
        keys = []
        for seed in CHECK_SEEDS:
            np.random.seed(seed)
            keys.append(nl.shared_constant(np.random.randn(M, N).astype(np.float32)[:, 0:1].copy()))
        for i in nl.affine_range(M // 128):
            t = nl.load(x[i * 128:(i + 1) * 128, :])
            known = nl.zeros((128, 1), dtype=nl.float32)
            for key in keys:
                known = nl.add(known, nl.equal(t[:, 0:1], nl.load(key[i * 128:(i + 1) * 128, :]), dtype=nl.float32))
            factor = nl.add(nl.multiply(known, NEAR - RELAXED), 1.0 + RELAXED)
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(nl.multiply(t, nl.sigmoid(t)), factor))
        return out
'''


class CheatTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()

    def tearDown(self):
        self.ws.close()

    def test_honest_kernel_is_ok(self):
        kernel = os.path.join(EXAMPLES, 'kernel.py')
        self.assertEqual(self.ws.evaluate(SHAPES['small'], kernel, seeds=1)['verdict'], 'OK')

    def test_every_cheat_class_is_not_ok(self):
        for shape, reference in SHAPES.items():
            for name, body in CHEATS.items():
                with self.subTest(cheat=name, shape=shape):
                    result = self.ws.evaluate(reference, self.ws.kernel(body), seeds=1, fresh_seed=None)
                    self.assertNotEqual(result['verdict'], 'OK', result)
                    # Cheats that need sys, atexit, gc or private attributes stop at the NKI static rules
                    # (COMPILE_ERROR, the first gate); the rest at the trusted replay. Forged and truncated
                    # programs reaching the replay directly are covered by test_replay.py.
                    self.assertIn(result['verdict'], ('COMPILE_ERROR', 'INCORRECT', 'RUNTIME_ERROR'),
                                  result['message'])

    def test_an_approximation_patched_for_the_check_seeds_is_held_to_the_tolerance_on_fresh_inputs(self):
        # 2.5x the tolerance off on unseen inputs; exact on the check seeds, or just under the tolerance there (a
        # fresh limit that followed the check errors let this be 4.5x off everywhere else)
        for near in (0.0, 1.9e-5):
            with self.subTest(near=near):
                cheat = self.ws.kernel(KNOWN_SEEDS_RELAXED.format(relaxed=5e-5, near=near))
                result = self.ws.evaluate(SHAPES['small'], cheat, seeds=5, fresh_seed=None)
                self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
                self.assertIn('fresh inputs', result['message'])
                self.assertEqual(result['seeds_checked'], 5)
        # The same error everywhere (the kernel's check seeds list empty) is INCORRECT on the check seeds already.
        honest_but_wrong = self.ws.kernel(KNOWN_SEEDS_RELAXED.format(relaxed=5e-5, near=0.0).replace(
            'CHECK_SEEDS = (0, 21, 42, 63, 84)', 'CHECK_SEEDS = ()'))
        self.assertEqual(self.ws.evaluate(SHAPES['small'], honest_but_wrong, seeds=5)['verdict'], 'INCORRECT')

    def test_answers_embedded_for_every_known_seed_fail_on_the_secret_fresh_inputs(self):
        # the final run's seed is drawn per profile by step B and never told to step A (protocol/evaluation.py)
        result = self.ws.evaluate(SHAPES['small'], self.ws.kernel(KNOWN_SEED_ANSWERS), seeds=5, fresh_seed=None)
        self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
        self.assertEqual(result['seeds_checked'], 5)
        self.assertIn('fresh inputs', result['message'])


# A Beta 1 kernel (neuronxcc's jit and language functions, imported by name) that also imports the Beta 2 `nki`
# package, unused. Two iterations of an affine_range loop store different values into one block: Beta 1 runs the
# iterations in parallel (the nl.affine_range page: no loop-carried dependence), so which value lands is undefined.
MIXED_IMPORTS_AFFINE_CONFLICT = '''import nki
from neuronxcc.nki import jit
from neuronxcc.nki.language import affine_range, load, store, multiply, sigmoid, ndarray, shared_hbm


@jit
def kernel(x):
    M, N = x.shape
    out = ndarray((M, N), dtype=x.dtype, buffer=shared_hbm)
    for i in affine_range(M // 128):
        t = load(x[i * 128:(i + 1) * 128, :])
        y = multiply(t, sigmoid(t))
        for k in affine_range(2):
            store(out[i * 128:(i + 1) * 128, :], value=multiply(y, k))
    return out
'''
# A Beta 2 kernel that imports the `nki` submodules only (no bare `import nki`) and passes its destination first.
BETA2_SUBMODULE_IMPORTS = '''import nki.isa as nisa
import nki.language as nl
from nki import jit


@jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        t = nl.ndarray((128, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        s = nl.ndarray((128, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.activation(s, nl.sigmoid, t)
        y = nl.ndarray((128, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(y, t, s, nl.multiply)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=y)
    return out
'''


class BetaVersionTest(unittest.TestCase):
    """Which NKI version a kernel is written against decides affine_range's semantics and the call forms; it is
    judged by the kernel module's import statements (nki_sim/beta.py uses_beta2), not by the module objects among
    its globals (both packages hold the same function objects here)."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_an_unused_import_nki_does_not_make_a_beta1_kernel_beta2(self):
        # before: OK (the run was taken for Beta 2: affine_range sequential, no write-conflict check)
        kernel = self.ws.write('mixed_imports.py', MIXED_IMPORTS_AFFINE_CONFLICT)
        result = self.ws.evaluate(SHAPES['small'], kernel, seeds=1)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('Unexpected output dependencies', result['message'])

    def test_a_beta2_kernel_importing_nki_submodules_only_is_beta2(self):
        # before: COMPILE_ERROR (taken for Beta 1: the destination-first activation call was refused)
        kernel = self.ws.write('beta2_submodules.py', BETA2_SUBMODULE_IMPORTS)
        result = self.ws.evaluate(SHAPES['small'], kernel, seeds=1)
        self.assertEqual(result['verdict'], 'OK', result['message'])


# Sums computed in float64 tiles: no NeuronCore engine has a float64 (or 64-bit integer) format.
FLOAT64_TILES = '''
@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :], dtype=DTYPE)
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(t, nl.sigmoid(t, dtype=DTYPE), dtype=DTYPE))
    return out
'''
SBUF_FLOAT64 = '''
@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        t = nl.ndarray((128, N), dtype=DTYPE, buffer=nl.sbuf)
        t[...] = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(t, nl.sigmoid(t)))
    return out
'''

HBM_FLOAT64 = '''
@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=DTYPE, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(t, nl.sigmoid(t)))
    return out
'''


class EngineFormatTest(unittest.TestCase):
    """The tensors a kernel declares and its instruction results hold the formats of the NKI data type table only
    (nki_sim/dtypes.py check_on_chip)."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_float64_and_int64_tiles_are_refused(self):
        # before: OK (float64 tiles computed the output more exactly than the device's float32 engines)
        for dtype in ('np.float64', 'np.int64', 'np.uint64', 'np.complex64'):
            for body in (FLOAT64_TILES, SBUF_FLOAT64, HBM_FLOAT64):
                with self.subTest(dtype=dtype, body=body[:40]):
                    kernel = self.ws.kernel(body.replace('DTYPE', dtype))
                    result = self.ws.evaluate(SHAPES['small'], kernel, seeds=1)
                    self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
                    self.assertIn('not an NKI data type', result['message'])

    def test_the_table_formats_are_accepted(self):
        for dtype in ('np.float32', 'nl.float32', 'nl.bfloat16', 'np.float16', 'nl.tfloat32'):
            with self.subTest(dtype=dtype):
                kernel = self.ws.kernel(FLOAT64_TILES.replace('DTYPE', dtype))
                result = self.ws.evaluate(SHAPES['small'], kernel, seeds=1, tolerance=1e-2)
                self.assertEqual(result['verdict'], 'OK', result['message'])


TRANSPOSE_64_REFERENCE = '''
def get_inputs():
    return [np.random.randn(64, 64).astype(np.float32)]


def forward(x):
    return np.ascontiguousarray(x.T)
'''
# A [64, 128] moving tile with I in columns 0:64 and 2*I in columns 64:128; the matmul masked to columns 64:128
# multiplies by 2*I on the device (is_transpose with a moving operand that is not an identity is a product).
IDENTITY_IN_ANOTHER_WINDOW = '''
@nki.jit
def kernel(x):
    out = nl.ndarray((64, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    eye = np.concatenate([np.eye(64), 2 * np.eye(64)], axis=1).astype(np.float32)
    mv = nl.load(nl.shared_constant(eye))
    s = nl.load(x)
    i_f = nl.arange(128)[None, :]
    FIRST
    second = nisa.nc_matmul(s, mv, is_transpose=True, mask=(i_f >= 64))
    nl.store(out, value=nl.copy(second[:, 64:128]))
    return out
'''


class TransposeIdentityTest(unittest.TestCase):
    """nc_matmul(is_transpose=True) is a transpose only for an identity moving operand: the identity test is made on
    the columns the matmul reads (nki_sim/isa.py _is_identity)."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_an_identity_in_another_mask_window_of_the_same_tile_does_not_make_a_transpose(self):
        # before: OK with the first matmul (its window, an identity, was remembered for the whole tile)
        reference = self.ws.reference(TRANSPOSE_64_REFERENCE)
        for first in ('pass', 'nisa.nc_matmul(s, mv, is_transpose=True, mask=(i_f < 64))'):
            with self.subTest(first=first):
                kernel = self.ws.kernel(IDENTITY_IN_ANOTHER_WINDOW.replace('FIRST', first))
                result = self.ws.evaluate(reference, kernel, seeds=1)
                self.assertEqual(result['verdict'], 'INCORRECT', result['message'])


if __name__ == '__main__':
    unittest.main()
