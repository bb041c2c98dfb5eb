"""Arithmetic ALU operators on integer tiles compute in float32, bitvec operators on the bit patterns."""
import unittest

import numpy as np

from nki_sim import target
from tests.support import Workspace
from tests.test_trace import parse

BETA2_HEADER = '''import numpy as np
import nki
import nki.language as nl
import nki.isa as nisa
'''

KERNEL = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((128, 20), dtype=nl.int32, buffer=nl.shared_hbm)
        at = nl.ndarray((128, 4), dtype=nl.int32, buffer=nl.sbuf)
        bt = nl.ndarray((128, 4), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=at, src=a)
        nisa.dma_copy(dst=bt, src=b)
        r = nl.ndarray((128, 20), dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=r[:, 0:4], data1=at, data2=bt, op=nl.add)
        nisa.tensor_scalar(dst=r[:, 4:8], data=at, op0=nl.subtract, operand0=3)
        r[:, 8:12] = nl.multiply(at, bt)
        nisa.tensor_tensor(dst=r[:, 12:16], data1=at, data2=bt, op=nl.bitwise_xor)
        nisa.tensor_reduce(dst=r[:, 16:17], op=nl.add, data=at, axis=1)
        nisa.tensor_copy(dst=r[:, 17:20], src=bt[:, 1:4])
        nisa.dma_copy(dst=out, src=r)
        return out
    '''

REFERENCE = '''
def get_inputs():
    rng = np.random.default_rng(3)
    a = rng.integers(2**24, 2**28, (128, 4)).astype(np.int32)
    a[:, 0] = rng.integers(-1000, 1000, 128)        # small values stay exact
    b = rng.integers(1, 8, (128, 4)).astype(np.int32)
    return [a, b]


def f32(x):
    return np.asarray(x, np.float64).astype(np.float32)


def forward(a, b):
    out = np.zeros((128, 20))
    out[:, 0:4] = f32(f32(a) + f32(b))
    out[:, 4:8] = f32(f32(a) - f32(3))
    out[:, 8:12] = f32(f32(a) * f32(b))
    out[:, 12:16] = np.bitwise_xor(a, b)
    s = f32(a[:, 0])
    for j in range(1, 4):
        s = f32(s + f32(a[:, j]))
    out[:, 16] = s
    out[:, 17:20] = b[:, 1:4]
    return np.trunc(out)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(np.asarray(k_res, np.float64), ref.shape)]
'''


# ScalarE's scale and bias, a Vector Engine scan and a dtype-changing copy, each on int32 values above 2**24
ENGINE_KERNEL = '''
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 12), dtype=nl.int32, buffer=nl.shared_hbm)
        at = nl.load(a)
        r = nl.ndarray((128, 12), dtype=nl.int32, buffer=nl.sbuf)
        r[:, 0:4] = nisa.activation(op=nl.copy, data=at, scale=3.0, bias=nl.full((128, 1), 7.0, dtype=nl.float32),
                                    dtype=nl.int32)
        ones = nl.full((128, 4), 1, dtype=nl.int32)
        r[:, 4:8] = nisa.tensor_tensor_scan(ones, at, 0, op0=nl.multiply, op1=nl.add, dtype=nl.int32)
        r[:, 8:12] = nl.copy(nisa.tensor_copy(at, dtype=nl.uint8), dtype=nl.int32)
        nl.store(out, r)
        return out
    '''

ENGINE_REFERENCE = '''
def get_inputs():
    a = np.random.default_rng(5).integers(2**24, 2**26, (128, 4)).astype(np.int32)
    a[:, 3] = np.arange(128) - 64           # small values stay exact, and a narrowing copy saturates at 0 and 255
    return [a]


def f32(x):
    return np.asarray(x, np.float64).astype(np.float32)


def forward(a):
    out = np.zeros((128, 12))
    out[:, 0:4] = f32(f32(f32(a) * f32(3)) + f32(7))
    s = np.zeros(128, np.float32)
    for j in range(4):
        s = f32(s + f32(a[:, j]))
        out[:, 4 + j] = s
    out[:, 8:12] = np.clip(f32(a), 0, 255)
    return np.trunc(out)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(np.asarray(k_res, np.float64), ref.shape)]
'''


class IntegerArithmeticTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_arithmetic_operators_convert_integers_to_float32_and_bitvec_operators_do_not(self):
        # the NKI API's "Supported Math Operators": arithmetic operators "convert input elements into float32
        # before performing the operators", bitvec operators "treat input elements as bit patterns"; an int32
        # above 2**24 added, subtracted, multiplied or summed loses its low bits (before: exact integer
        # arithmetic, so a kernel whose integer math is wrong on the hardware verified)
        kernel = self.ws.kernel(KERNEL)
        reference = self.ws.reference(REFERENCE, metadata='tolerance: 1.0e-15\n')
        for timing_only in (True, False):
            result = self.ws.evaluate(reference, kernel, seeds=1, timing_only=timing_only)
            self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_activation_scans_and_dtype_changing_copies_compute_in_float32(self):
        # ScalarE's x * scale + bias, the scan's arithmetic and the accumulation registers are float32 (API common
        # fields), and "when src and dst data types differ: tensor_copy performs an intermediate FP32 cast" (before:
        # exact integers, and an int32 to uint8 copy kept the low byte)
        result = self.ws.evaluate(self.ws.reference(ENGINE_REFERENCE, metadata='tolerance: 1.0e-15\n'),
                                  self.ws.kernel(ENGINE_KERNEL), seeds=1)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_on_neuroncore_v3_int32_tensor_tensor_arithmetic_is_exact_on_gpsimd(self):
        # the Trn2/Trn3 tensor_tensor page: "When all input/output tiles are int32 or uint32, the operation defaults
        # to GpSimd Engine, which uses native integer arithmetic"; trn1 keeps the float32 reading
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray((128, 16), dtype=nl.int32, buffer=nl.shared_hbm)
                at, bt = nl.load(a), nl.load(b)
                r = nl.ndarray((128, 16), dtype=nl.int32, buffer=nl.sbuf)
                r[:, 0:4] = nisa.tensor_tensor(at, bt, op=nl.add)
                r[:, 4:8] = nisa.tensor_tensor(at, bt, op=nl.multiply)
                r[:, 8:12] = nisa.tensor_tensor(at, bt, op=nl.add, engine=nisa.vector_engine)
                r[:, 12:16] = nisa.tensor_tensor(at, bt, op=nl.add, dtype=nl.float32)
                nl.store(out, r)
                return out
            ''')
        rng = np.random.default_rng(7)
        a = rng.integers(2**28, 2**30, (128, 4)).astype(np.int32)
        b = rng.integers(1, 8, (128, 4)).astype(np.int32)
        lossy = (a.astype(np.float32) + b.astype(np.float32)).astype(np.int64)
        target.set_target('trn2')
        self.addCleanup(target.set_target, target.DEFAULT)
        out, recorder = self.ws.run(kernel, a, b)
        np.testing.assert_array_equal(out[:, 0:4], a + b)
        np.testing.assert_array_equal(out[:, 4:8], a * b)        # wraps at 32 bits
        np.testing.assert_array_equal(out[:, 8:12], lossy)        # the Vector Engine named: float32
        np.testing.assert_array_equal(out[:, 12:16], lossy)       # a float32 result: float32
        engines = [f['eng'] for kind, f in parse(recorder.text())[1] if kind == 'I' and f['op'] == 'tensor_tensor']
        self.assertEqual(engines, ['pool', 'pool', 'dve', 'auto'])
        target.set_target('trn1')
        out, _ = self.ws.run(kernel, a, b)
        np.testing.assert_array_equal(out[:, 0:4], lossy)

    def test_an_integer_scan_carries_its_running_value_in_float32(self):
        # nisa.tensor_tensor_scan with arithmetic operators reads its operands, the running value included, as
        # float32 (the same "Supported Math Operators" rule); a public radix sort states it from trn2:
        # "tensor_tensor_scan accumulates in fp32 and drops low bits once the running total passes 2**24". The
        # simulator scanned int32 tiles in exact integers, so a prefix sum past 2**24 verified where the device
        # rounds it.
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                ones = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ones, value=1)
                xt = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=xt, src=x)
                r = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.sbuf)
                nisa.tensor_tensor_scan(dst=r, data0=ones, data1=xt, initial=16777212, op0=nl.multiply, op1=nl.add)
                out = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=r)
                return out
            ''')
        reference = self.ws.reference('''
def get_inputs():
    return [np.random.default_rng(5).integers(1, 4, (128, 8)).astype(np.int32)]


def forward(x):
    running = np.full(128, 16777212, np.float32)
    columns = []
    for i in range(8):
        running = (running * np.float32(1) + x[:, i].astype(np.float32)).astype(np.float32)
        columns.append(running)
    return np.stack(columns, axis=1).astype(np.float64)


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(np.asarray(k_res, np.float64), ref.shape)]
''', metadata='tolerance: 1.0e-15\n')
        result = self.ws.evaluate(reference, kernel, seeds=1)
        self.assertEqual(result['verdict'], 'OK', result['message'])


    def test_a_float_result_assigned_to_an_integer_tile_saturates(self):
        # a float result written to an integer dtype saturates at the integer's range (docs/simulator.md); an
        # assignment `u8[...] = <float tile>` took numpy's cast instead, which wraps (-13 became 243) or is
        # undefined, so a public quantization kernel's uint8 exponent `nl.subtract(nl.floor(nl.log(m)), 9)` of
        # small values read 243, 2.0 ** 243 saturated and its matmul divided by zero
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                t = nl.load(x)
                u8 = nl.ndarray((128, 4), dtype=nl.uint8, buffer=nl.sbuf)
                u8[...] = nl.subtract(t, 9.0)
                i8 = nl.ndarray((128, 4), dtype=nl.int8, buffer=nl.sbuf)
                i8[...] = nl.multiply(t, 100.0)
                half = nl.ndarray((128, 4), dtype=nl.uint8, buffer=nl.sbuf)
                nisa.memset(dst=half, value=7)
                i_p = nl.arange(128)[:, None]
                half[...] = nl.add(t, 300.0, mask=(i_p < 64))
                out = nl.ndarray((128, 12), dtype=nl.float32, buffer=nl.shared_hbm)
                nl.store(out[:, 0:4], value=nl.copy(u8, dtype=nl.float32))
                nl.store(out[:, 4:8], value=nl.copy(i8, dtype=nl.float32))
                nl.store(out[:, 8:12], value=nl.copy(half, dtype=nl.float32))
                return out
            ''')
        x = np.random.default_rng(11).uniform(-20.0, 20.0, (128, 4)).astype(np.float32)
        out, _ = self.ws.run(kernel, x)
        np.testing.assert_array_equal(out[:, 0:4], np.clip(np.trunc(x - np.float32(9.0)), 0, 255))
        np.testing.assert_array_equal(out[:, 4:8], np.clip(np.trunc(x * np.float32(100.0)), -128, 127))
        np.testing.assert_array_equal(out[0:64, 8:12], np.full((64, 4), 255.0))
        np.testing.assert_array_equal(out[64:, 8:12], np.full((64, 4), 7.0))

    def test_a_beta2_tensor_tensor_on_32_bit_integers_is_exact_unless_sent_to_the_vector_engine(self):
        # nki.isa.tensor_tensor (NKI 2.31+ pages): "int32/uint32 types: When all input/output tiles are int32 or
        # uint32, the operation defaults to GpSimd Engine, which uses native integer arithmetic. This ensures exact
        # results for all 32-bit integer values. You may override this by passing engine=nki.isa.engine.vector
        # explicitly." The simulator converted them to float32 (the older pages' rule, which Beta 1 keeps), so
        # 2**24 + 1 plus 1 gave 2**24.
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                at = nl.ndarray((128, 4), dtype=nl.int32, buffer=nl.sbuf)
                bt = nl.ndarray((128, 4), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=at, src=a)
                nisa.dma_copy(dst=bt, src=b)
                r = nl.ndarray((128, 20), dtype=nl.int32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=r[:, 0:4], data1=at, data2=bt, op=nl.add)
                nisa.tensor_tensor(dst=r[:, 4:8], data1=at, data2=bt, op=nl.multiply)
                nisa.tensor_tensor(dst=r[:, 8:12], data1=at, data2=bt, op=nl.subtract, engine=nisa.engine.vector)
                f = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=f, data1=at, data2=bt, op=nl.add)
                nisa.tensor_copy(dst=r[:, 12:16], src=f)
                nisa.tensor_tensor(dst=r[:, 16:20], data1=at, data2=bt, op=nl.greater)
                out = nl.ndarray((128, 20), dtype=nl.int32, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=r)
                return out
            ''', header=BETA2_HEADER)
        reference = self.ws.reference('''
def get_inputs():
    rng = np.random.default_rng(7)
    a = rng.integers(2**24, 2**30, (128, 4)).astype(np.int32)
    b = rng.integers(1, 64, (128, 4)).astype(np.int32)
    b[:, 3] = a[:, 3] - 1           # a > b by one: float32 rounds both to the same value
    return [a, b]


def forward(a, b):
    f32 = lambda x: np.asarray(x, np.float64).astype(np.float32)
    out = np.zeros((128, 20))
    out[:, 0:4] = a.astype(np.int64) + b
    out[:, 4:8] = (a.astype(np.int64) * b).astype(np.int32)        # wraps modulo 2**32
    out[:, 8:12] = np.trunc(f32(f32(a) - f32(b)))
    out[:, 12:16] = np.trunc(f32(f32(a) + f32(b)))
    out[:, 16:20] = a > b
    return out


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(np.asarray(k_res, np.float64), ref.shape)]
''', metadata='tolerance: 1.0e-15\n')
        for timing_only in (True, False):
            result = self.ws.evaluate(reference, kernel, seeds=1, timing_only=timing_only)
            self.assertEqual(result['verdict'], 'OK', result['message'])


if __name__ == '__main__':
    unittest.main()
