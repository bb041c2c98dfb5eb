"""nl.atomic_rmw is an associative reduction: iterations of an affine_range loop may update the same HBM rows."""
import unittest

from tests.support import Workspace

KERNEL = '''
    @nki.jit
    def kernel(ids, vals, table):
        i_f = nl.arange(8)[None, :]
        for t in nl.affine_range(4):
            idx = nl.load(ids[t * 128:(t + 1) * 128, :])
            v = nl.load(vals[t * 128:(t + 1) * 128, :])
            nl.atomic_rmw(table[idx, i_f], value=v, op=np.add)
        return table
    '''

PLAIN_STORE = '''
    @nki.jit
    def kernel(ids, vals, table):
        for t in nl.affine_range(4):
            v = nl.load(vals[t * 16:(t + 1) * 16, :])
            nl.store(table[0:16, :], value=v)
        return table
    '''

REFERENCE = '''
def get_inputs():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 16, (512, 1)).astype(np.int32)      # every row of the table hit by several tiles
    vals = rng.standard_normal((512, 8)).astype(np.float32)
    return [ids, vals]


def forward(ids, vals):
    table = np.zeros((16, 8))
    np.add.at(table, ids[:, 0], vals.astype(np.float64))
    return table.astype(np.float32)


def transform_to_nki_inputs(inputs):
    return inputs + [np.zeros((16, 8), np.float32)]


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
'''


class AtomicRmwTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_atomic_adds_from_different_affine_iterations_into_the_same_rows_verify(self):
        # the nl.affine_range page: "associative reductions are not considered loop carried dependencies";
        # nl.atomic_rmw (op np.add) is an atomic read-modify-write (before: COMPILE_ERROR "Unexpected output
        # dependencies", as for a plain store)
        kernel = self.ws.kernel(KERNEL)
        reference = self.ws.reference(REFERENCE, metadata='tolerance: 1.0e-5\n')
        for timing_only in (True, False):
            result = self.ws.evaluate(reference, kernel, seeds=1, timing_only=timing_only)
            self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_plain_stores_from_different_affine_iterations_into_the_same_rows_are_still_refused(self):
        kernel = self.ws.kernel(PLAIN_STORE)
        reference = self.ws.reference(REFERENCE)
        result = self.ws.evaluate(reference, kernel, seeds=1, timing_only=True)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR')
        self.assertIn('Unexpected output dependencies', result['message'])


if __name__ == '__main__':
    unittest.main()
