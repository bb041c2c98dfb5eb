"""Memory a kernel declares with nl.ndarray holds stale data on the device until an instruction writes it: in the
simulator SBUF, PSUM and HBM so declared read as NaN (float) or a fixed bit pattern (integer), so a kernel that
reads it first is INCORRECT, with a message that says where the NaN comes from. A matmul's first add into a PSUM
element starts its accumulation group, so it overwrites."""
import unittest

from tests.support import STANDARD_TRANSFORMS, Workspace

# y = upper triangle of x (x [128, 128]); each kernel takes the zeros below the diagonal from somewhere
TRIANGLE = '''
def get_inputs():
    return [np.random.normal(size=(128, 128)).astype(np.float32)]


def forward(x):
    return np.triu(x)
''' + STANDARD_TRANSFORMS

TRIANGLE_FROM = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
        tile = nl.load(x)
        DECLARE
        i = nl.arange(128)[:, None]
        j = nl.arange(128)[None, :]
        nl.store(out, value=nl.where(i <= j, tile, ZEROS))
        return out
    '''


def triangle_from(declare, zeros):
    return TRIANGLE_FROM.replace('DECLARE', declare).replace('ZEROS', zeros)


class UninitializedMemoryTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def evaluate(self, reference, kernel):
        return self.ws.evaluate(self.ws.reference(reference), self.ws.kernel(kernel))

    def test_reading_never_written_sbuf_or_hbm_is_incorrect(self):
        for name, declare, zeros in (
                ('sbuf', 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)', 'junk'),
                ('hbm', 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.hbm)', 'nl.load(junk)')):
            with self.subTest(buffer=name):
                result = self.evaluate(TRIANGLE, triangle_from(declare, zeros))
                self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
                self.assertIn('contains 8128 NaN', result['message'])
                self.assertIn('fills SBUF, PSUM and HBM declared with nl.ndarray with NaN', result['message'])

    def test_never_written_float_memory_converted_to_an_integer_dtype_stays_stale(self):
        # a computed float result written to an integer dtype saturates; its NaN (the simulator's stale float data)
        # gave 0, so a never-written tile converted to int32 and back read as a clean zero tile (before: OK)
        declare = 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)'
        for convert in ('nl.multiply(junk, 1.0, dtype=nl.int32)', 'nl.copy(junk, dtype=nl.int32)',
                        'nisa.tensor_scalar(junk, np.add, 0.0, dtype=nl.int32)',
                        # (numpy converts NaN to 0 for 8- and 16-bit integers)
                        'nl.copy(junk, dtype=nl.int16)', 'nl.copy(junk, dtype=nl.uint8)'):
            with self.subTest(convert=convert):
                result = self.evaluate(TRIANGLE, triangle_from(declare, f'nl.copy({convert}, dtype=x.dtype)'))
                self.assertEqual(result['verdict'], 'INCORRECT', result['message'])

    def test_a_result_that_hides_never_written_memory_is_incorrect(self):
        # Each takes its zeros from a value computed from never-written memory that the usual fill hides: a
        # comparison of NaN is false, a bool tile reads True, the integer pattern is larger than the data. The
        # outputs change when that memory holds other values (the device's stale data), so none is OK.
        for name, declare, zeros in (
                ('a comparison of never-written floats',
                 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)',
                 'nl.where(nl.greater(junk, 0.0), tile, nl.multiply(tile, 0.0))'),
                ('the other comparison', 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)',
                 'nl.where(nl.less(junk, 0.0), tile, nl.multiply(tile, 0.0))'),
                ('a never-written bool mask', 'junk = nl.ndarray((128, 128), dtype=nl.bool_, buffer=nl.sbuf)',
                 'nl.where(junk, nl.multiply(tile, 0.0), tile)'),
                ('a test for zero of never-written floats',
                 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)',
                 'nl.where(nl.not_equal(junk, 0.0), nl.multiply(tile, 0.0), tile)'),
                ('a test for zero of never-written integers',
                 'junk = nl.ndarray((128, 128), dtype=nl.int32, buffer=nl.sbuf)',
                 'nl.where(nl.not_equal(junk, 0), nl.multiply(tile, 0.0), tile)'),
                ('the truth of never-written floats',
                 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)',
                 'nl.where(nl.logical_and(junk, nl.equal(tile, tile)), nl.multiply(tile, 0.0), tile)'),
                ('a never-written int32 running minimum',
                 'junk = nl.ndarray((128, 128), dtype=nl.int32, buffer=nl.sbuf)',
                 'nl.copy(nl.minimum(junk, nl.copy(nl.multiply(tile, 0.0), dtype=nl.int32)), dtype=x.dtype)')):
            with self.subTest(name):
                result = self.evaluate(TRIANGLE, triangle_from(declare, zeros))
                self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
                self.assertIn('depend on on-chip memory no instruction wrote', result['message'])

    def test_initialized_or_written_memory_reads_its_values(self):
        for name, declare, zeros in (
                ('nl.zeros', 'junk = nl.zeros((128, 128), dtype=x.dtype, buffer=nl.sbuf)', 'junk'),
                ('written first', 'junk = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)\n'
                                  '        junk[...] = nl.multiply(tile, 0.0)', 'junk')):
            with self.subTest(name):
                result = self.evaluate(TRIANGLE, triangle_from(declare, zeros))
                self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_a_vector_accumulator_in_never_written_psum_is_incorrect(self):
        # the accumulator never zeroed: only a matmul's first add starts from nothing
        reference = '''
def get_inputs():
    return [np.random.normal(size=(128, 512)).astype(np.float32)]


def forward(x):
    return x.sum(axis=1, keepdims=True)
''' + STANDARD_TRANSFORMS
        kernel = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
        for j in nl.sequential_range(4):
            acc[...] += nl.sum(nl.load(x[:, j * 128:(j + 1) * 128]), axis=1, keepdims=True)
        nl.store(out, value=nl.copy(acc))
        return out
    '''
        result = self.evaluate(reference, kernel)
        self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
        self.assertIn('contains 128 NaN', result['message'])

    def test_a_matmul_into_a_fresh_psum_tile_starts_from_zero(self):
        # the NKI matmul tutorial's basic kernel: nc_matmul into an nl.ndarray PSUM tile
        reference = '''
def get_inputs():
    return [np.random.normal(size=(128, 64)).astype(np.float32),
            np.random.normal(size=(128, 512)).astype(np.float32)]


def forward(a_t, b):
    return a_t.T @ b
''' + STANDARD_TRANSFORMS
        kernel = '''
    @nki.jit
    def kernel(a_t, b):
        out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.psum)
        acc[...] += nisa.nc_matmul(nl.load(a_t), nl.load(b))
        nl.store(out, value=nl.copy(acc))
        return out
    '''
        result = self.evaluate(reference, kernel)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_the_masked_off_elements_of_a_masked_load_are_never_written(self):
        # `t = nl.load(x[i_p, i_f], mask=i_p < 100)` writes 100 of t's 128 partitions; the other 28 are stale on the
        # device. They read as zeros (round 49a: a thin GEMM loading its last, partial K tile so and contracting all
        # 128 partitions verified at K 200)
        reference = '''
def get_inputs():
    return [np.random.normal(size=(100, 64)).astype(np.float32)]


def forward(x):
    return RESULT
''' + STANDARD_TRANSFORMS
        body = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(SHAPE, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        t = nl.load(x[i_p, i_f], mask=(i_p < 100))
        STORE
        return out
    '''
        for name, result, shape, store, verdict in (
                ('the whole tile read', 'np.exp(np.concatenate([x, np.zeros((28, 64), np.float32)]))', '(128, 64)',
                 'nl.store(out, value=nl.exp(t))', 'INCORRECT'),
                ('its loaded part only', 'np.exp(x)', '(100, 64)',
                 'nl.store(out[i_p, i_f], value=nl.exp(t), mask=(i_p < 100))', 'OK')):
            with self.subTest(name):
                outcome = self.evaluate(reference.replace('RESULT', result),
                                        body.replace('SHAPE', shape).replace('STORE', store))
                self.assertEqual(outcome['verdict'], verdict, outcome['message'])
                if verdict == 'INCORRECT':
                    self.assertIn('contains 1792 NaN', outcome['message'])
                    self.assertIn("masked-off elements of a masked instruction's new tile", outcome['message'])

    def test_output_elements_never_written_keep_their_own_message(self):
        kernel = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out[0:64, :], value=nl.load(x[0:64, :]))
        return out
    '''
        result = self.evaluate(TRIANGLE, kernel)
        self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
        self.assertIn('8192 element(s) never written by any instruction', result['message'])


if __name__ == '__main__':
    unittest.main()
