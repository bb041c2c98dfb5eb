"""Every write into a tensor of a low-precision format holds that format's values: stores, atomic updates,
reduction read-outs, fill values and constants are rounded (bfloat16 to nearest even, fp8 saturating at its largest
value), as engine and DMA writes already were. Before, each of these kept the float32 values, so a kernel that
wrote its output as bfloat16 verified against a float32 reference exactly and moved half the bytes."""
import unittest

import numpy as np

from nki_sim.dtypes import round_to_bf16, round_to_fp8_e4m3

from .support import SIMPLE_REFERENCE, Workspace
from .test_trace import parse


def bf16(values):
    return round_to_bf16(np.array(values, np.float32))


class LowPrecisionWritesTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.x = np.random.default_rng(3).normal(size=(128, 64)).astype(np.float32)

    def test_a_store_into_a_bfloat16_or_fp8_output_rounds_to_its_format(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                half = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
                small = nl.ndarray(x.shape, dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
                t = nl.load(x)
                nl.store(half, value=t)
                half_of_rows = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
                nl.store(half_of_rows[0:64, :], value=t[0:64, :])
                nl.store(small, value=nl.multiply(t, 1000.0))
                return half, small, half_of_rows
            ''')
        (half, small, half_of_rows), _ = self.ws.run(kernel, self.x)
        np.testing.assert_array_equal(half, bf16(self.x))
        np.testing.assert_array_equal(half_of_rows[0:64], bf16(self.x[0:64]))
        np.testing.assert_array_equal(small, round_to_fp8_e4m3(self.x * np.float32(1000.0)))
        self.assertEqual(float(np.abs(small).max()), 240.0)

    def test_an_atomic_update_of_a_bfloat16_tensor_rounds_the_result(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                acc = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
                nl.store(acc, value=nl.zeros(x.shape, dtype=nl.float32))
                t = nl.load(x)
                nl.atomic_rmw(acc, value=t, op=nl.add)
                nl.atomic_rmw(acc, value=nl.multiply(t, 0.001), op=nl.add)
                return acc
            ''')
        acc, _ = self.ws.run(kernel, self.x)
        np.testing.assert_array_equal(acc, bf16(bf16(self.x) + self.x * np.float32(0.001)))

    def test_a_reduce_res_in_bfloat16_holds_the_rounded_reduction(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                sums = nl.ndarray((128, 2), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_scalar_reduce(data=t, op0=nl.multiply, operand0=1.0, reduce_op=nl.add,
                                          reduce_res=sums[:, 0:1])
                nisa.activation_reduce(op=nl.copy, data=t, reduce_op=nl.add, reduce_res=sums[:, 1:2])
                nl.store(out, value=nl.copy(sums, dtype=nl.float32))
                return out
            ''')
        out, _ = self.ws.run(kernel, self.x)
        row_sums = self.x.sum(axis=1, dtype=np.float32)
        np.testing.assert_allclose(out[:, 0], bf16(row_sums), rtol=0, atol=1e-6 * np.abs(row_sums).max())
        np.testing.assert_array_equal(out[:, 0], bf16(out[:, 0]))
        np.testing.assert_array_equal(out[:, 1], bf16(out[:, 1]))
        self.assertFalse(np.array_equal(out[:, 0], row_sums))

    def test_fill_values_and_constants_take_their_declared_format(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 3), dtype=nl.float32, buffer=nl.shared_hbm)
                tenth = nl.full((128, 1), 0.1, dtype=nl.bfloat16)
                big = nl.full((128, 1), 1000.0, dtype=nl.float8_e4m3)
                constant = nl.shared_constant(np.full((128, 1), 0.1, np.float32), dtype=nl.bfloat16)
                both = nl.ndarray((128, 3), dtype=nl.float32, buffer=nl.sbuf)
                both[:, 0:1] = nl.copy(tenth, dtype=nl.float32)
                both[:, 1:2] = nl.copy(big, dtype=nl.float32)
                both[:, 2:3] = nl.load(constant, dtype=nl.float32)
                nl.store(out, value=both)
                return out
            ''')
        out, _ = self.ws.run(kernel, self.x)
        np.testing.assert_array_equal(out[:, 0], np.float32(0.10009765625))
        np.testing.assert_array_equal(out[:, 1], np.float32(240.0))
        np.testing.assert_array_equal(out[:, 2], np.float32(0.10009765625))

    def test_a_kernel_that_writes_its_output_in_bfloat16_is_judged_by_the_rounded_values(self):
        reference = self.ws.reference(SIMPLE_REFERENCE)
        honest = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            ''')
        halved = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            ''')
        self.assertEqual(self.ws.evaluate(reference, honest)['verdict'], 'OK')
        result = self.ws.evaluate(reference, halved)
        self.assertEqual(result['verdict'], 'INCORRECT', result)


class RegisterAccumulationTest(unittest.TestCase):
    def test_an_activation_with_a_reduce_cmd_reduces_into_the_registers_without_a_reduce_res(self):
        # the activation page: results are "stored into or reduced on top of ... reduce_regs ... controlled by the
        # reduce_cmd field"; reduce_res only reads them out (before: the first half's sum was dropped, and the
        # instruction was not timed as reducing)
        ws = Workspace()
        self.addCleanup(ws.close)
        kernel = ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(op=nl.copy, data=t[:, 0:32], reduce_op=nl.add,
                                reduce_cmd=nisa.reduce_cmd.reset_reduce)
                nisa.activation(op=nl.copy, data=t[:, 32:64], reduce_op=nl.add, reduce_res=r,
                                reduce_cmd=nisa.reduce_cmd.reduce)
                nl.store(out, value=r)
                return out
            ''')
        x = np.random.default_rng(9).normal(size=(128, 64)).astype(np.float32)
        out, recorder = ws.run(kernel, x)
        np.testing.assert_allclose(out[:, 0], x.sum(axis=1), rtol=1e-5, atol=1e-5)
        reducing = [f.get('red') for kind, f in parse(recorder.text())[1] if kind == 'I' and f['op'] == 'activation']
        self.assertEqual(reducing, ['1', '1'])


class ResultFormatTest(unittest.TestCase):
    """Without dtype=, a result takes the format of "data1 or data2, whichever has the higher precision" (the
    tensor_tensor page), whichever operand comes first. Before, it took the first float operand's."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_the_more_precise_operand_decides_in_either_order(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                h = nl.copy(t, dtype=nl.bfloat16)
                f = nl.copy(t, dtype=nl.float16)
                small = nl.multiply(t, 1e-3)
                a = nisa.tensor_tensor(h, small, op=nl.add)
                b = nl.add(h, small)
                c = nl.add(small, h)
                d = nl.add(h, f)
                e = nl.add(h, h)
                assert a.dtype == nl.float32 and b.dtype == nl.float32 and c.dtype == nl.float32, (a.dtype, b.dtype)
                assert d.dtype == nl.float32 and e.dtype == nl.bfloat16, (d.dtype, e.dtype)
                nl.store(out, value=b)
                return out
            ''')
        x = np.random.default_rng(5).normal(size=(128, 64)).astype(np.float32)
        out, _ = self.ws.run(kernel, x)
        np.testing.assert_array_equal(out, bf16(x) + x * np.float32(1e-3))


if __name__ == '__main__':
    unittest.main()
