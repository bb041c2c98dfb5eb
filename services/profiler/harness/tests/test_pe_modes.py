"""Tensor Engine modes that are cheaper than a matmul only for what they are documented for: the double-row
performance mode is an FP8 mode (nc_matmul page), and is_transpose=True is a transpose only with an identity moving
operand; with any other it is a product, traced and timed as one."""
import unittest

import numpy as np

from nki_sim.errors import CompileError
from tests.support import Workspace
from tests.test_trace import parse

DOUBLE_ROW = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((64, 512), dtype=nl.float32, buffer=nl.psum)
        acc += nisa.nc_matmul(OPERANDS, perf_mode='double_row_gen3')
        nl.store(out, value=nl.copy(acc))
        return out
    '''

TRANSPOSE_MODE = '''
    @nki.jit
    def kernel(a, m):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(nisa.nc_matmul(nl.load(a), nl.load(m), is_transpose=True)))
        return out
    '''


class PeModeTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        rng = np.random.default_rng(3)
        self.a = rng.standard_normal((128, 2, 64)).astype(np.float32) * 0.1
        self.b = rng.standard_normal((128, 2, 512)).astype(np.float32) * 0.1

    def test_the_double_row_mode_takes_fp8_operands_only(self):
        fp32 = self.ws.kernel(DOUBLE_ROW.replace('OPERANDS', 'nl.load(a), nl.load(b)'))
        with self.assertRaises(CompileError) as caught:
            self.ws.run(fp32, self.a, self.b)
        self.assertIn('the double-row mode is an FP8 mode; the operands are float32', caught.exception.message)
        fp8 = self.ws.kernel(DOUBLE_ROW.replace(
            'OPERANDS', 'nl.copy(nl.load(a), dtype=nl.float8_e4m3), nl.copy(nl.load(b), dtype=nl.float8_e4m3)'))
        outputs, _ = self.ws.run(fp8, self.a, self.b)
        self.assertEqual(np.asarray(outputs).shape, (64, 512))

    def test_the_double_row_mode_does_not_combine_with_column_tiling(self):
        # nc_matmul page: "double_row performance mode cannot be combined with Tensor Engine column tiling mode";
        # row tiling (column_size 128) stays accepted
        fp8 = 'nl.copy(nl.load(a), dtype=nl.float8_e4m3), nl.copy(nl.load(b), dtype=nl.float8_e4m3)'
        column = self.ws.kernel(DOUBLE_ROW.replace('OPERANDS', fp8 + ', tile_position=(0, 64), tile_size=(128, 64)'))
        with self.assertRaises(CompileError) as caught:
            self.ws.run(column, self.a, self.b)
        self.assertIn('"double_row performance mode cannot be combined with Tensor Engine column tiling mode"',
                      caught.exception.message)
        row = self.ws.kernel(DOUBLE_ROW.replace('OPERANDS', fp8 + ', tile_position=(0, 0), tile_size=(128, 128)'))
        outputs, _ = self.ws.run(row, self.a, self.b)
        self.assertEqual(np.asarray(outputs).shape, (64, 512))

    def test_a_transpose_mode_product_with_a_non_identity_is_timed_as_a_matmul(self):
        path = self.ws.kernel(TRANSPOSE_MODE)
        a = np.random.default_rng(4).standard_normal((128, 128)).astype(np.float32)
        for name, moving, op in (('identity', np.eye(128, dtype=np.float32), 'transpose'),
                                 ('product', a.copy(), 'matmul')):
            with self.subTest(name):
                outputs, recorder = self.ws.run(path, a, moving)
                expected = a.T if name == 'identity' else a.T @ moving
                np.testing.assert_allclose(np.asarray(outputs), expected, rtol=1e-4, atol=1e-4)
                _, records = parse(recorder.text())
                self.assertEqual([f['op'] for kind, f in records if kind == 'I' and f['eng'] == 'pe'], [op])


if __name__ == '__main__':
    unittest.main()
