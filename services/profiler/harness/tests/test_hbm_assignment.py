"""`hbm[...] = tile`: an assignment into an HBM tensor is a DMA store of the tile, as nl.store makes it (kernels
compiled with NKI 0.6.0 ran the form exactly on a trn2); `hbm[...] += tile` stays refused, by name."""
import unittest

from tests.support import Workspace
from tests.test_language import BETA2_HEADER

BETA1 = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(x.shape[0] // 128):
            out[i * 128:(i + 1) * 128, :] = nl.exp(nl.load(x[i * 128:(i + 1) * 128, :]))
        out[0:128, 0:4] = 1.5
        return out
    '''
BETA2 = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(x.shape[0] // 128):
            t = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
            out[i * 128:(i + 1) * 128, :] = t
        out[0:128, 0:4] = 1.5
        return out
    '''
SAME_ROWS = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(x.shape[0] // 128):
            out[0:128, :] = nl.load(x[i * 128:(i + 1) * 128, :])
        return out
    '''
ACCUMULATE = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        out[0:128, :] += nl.load(x[0:128, :])
        return out
    '''


def reference(forward):
    return f'''
def get_inputs():
    return [np.random.normal(size=(256, 32)).astype(np.float32)]


def forward(x):
    {forward}


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
'''


class HbmAssignmentTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def verdicts(self, kernel, forward):
        path = self.ws.reference(reference(forward), metadata='tolerance: 1.0e-5\n')
        return [self.ws.evaluate(path, kernel, timing_only=t) for t in (True, False)]

    def test_an_assignment_into_hbm_is_a_store_in_both_betas(self):
        for name, kernel, forward in (
                ('beta1', self.ws.kernel(BETA1), 'y = np.exp(x); y[:128, :4] = 1.5; return y'),
                ('beta2', self.ws.kernel(BETA2, header=BETA2_HEADER), 'y = x.copy(); y[:128, :4] = 1.5; return y')):
            for result in self.verdicts(kernel, forward):
                with self.subTest(kernel=name):
                    self.assertEqual(result['verdict'], 'OK', result['message'])
                    self.assertEqual(result['instructions'], 8 if name == 'beta1' else 6)  # 2 tiles, a memset, stores

    def test_assignments_of_different_affine_iterations_into_the_same_rows_conflict(self):
        for result in self.verdicts(self.ws.kernel(SAME_ROWS), 'return x'):
            self.assertEqual(result['verdict'], 'COMPILE_ERROR')
            self.assertIn('Unexpected output dependencies', result['message'])

    def test_an_update_in_place_of_hbm_is_refused_by_name(self):
        for result in self.verdicts(self.ws.kernel(ACCUMULATE), 'return x'):
            self.assertEqual(result['verdict'], 'COMPILE_ERROR')
            self.assertIn('load HBM data with nl.load first', result['message'])


if __name__ == '__main__':
    unittest.main()
