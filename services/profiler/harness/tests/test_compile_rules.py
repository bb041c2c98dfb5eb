"""Programs the real NKI toolchain rejects are COMPILE_ERROR verdicts naming the offending kernel line."""
import unittest

import numpy as np

from tests.support import SIMPLE_REFERENCE, Workspace, line_of
from tests.test_trace import parse

BAD_KERNELS = {
    'partition_dim_over_128': '''
        @nki.jit
        def kernel(x):
            big = nl.ndarray((256, 64), dtype=np.float32, buffer=nl.sbuf)  # <- here
            return x
        ''',
    'psum_tensor_over_8_banks': '''
        @nki.jit
        def kernel(x):
            acc = nl.zeros((128, 4097), dtype=np.float32, buffer=nl.psum)  # <- here
            return x
        ''',
    'matmul_moving_over_512': '''
        @nki.jit
        def kernel(x):
            a = nl.load(x)
            b = nl.ndarray((128, 1024), dtype=np.float32, buffer=nl.sbuf)
            r = nisa.nc_matmul(a, b)  # <- here
            return x
        ''',
    'matmul_operand_in_psum': '''
        @nki.jit
        def kernel(x):
            a = nl.load(x)
            p = nl.zeros((128, 64), dtype=np.float32, buffer=nl.psum)
            r = nisa.nc_matmul(a, p)  # <- here
            return x
        ''',
    'matmul_result_into_sbuf': '''
        @nki.jit
        def kernel(x):
            a = nl.load(x)
            dst = nl.ndarray((64, 64), dtype=np.float32, buffer=nl.sbuf)
            dst[...] = nisa.nc_matmul(a, a)  # <- here
            return x
        ''',
    'matmul_integer_operands': '''
        @nki.jit
        def kernel(x):
            a = nl.copy(nl.load(x), dtype=nl.int8)
            r = nisa.nc_matmul(a, a)  # <- here
            return x
        ''',
    'tensor_tensor_both_psum': '''
        @nki.jit
        def kernel(x):
            p = nl.zeros((128, 64), dtype=np.float32, buffer=nl.psum)
            q = nl.zeros((128, 64), dtype=np.float32, buffer=nl.psum)
            r = nisa.tensor_tensor(p, q, op=nl.add)  # <- here
            return x
        ''',
    'mixed_basic_and_advanced_indexing': '''
        @nki.jit
        def kernel(x):
            t = nl.load(x[nl.arange(128)[:, None], 0:64])  # <- here
            return x
        ''',
    'affine_range_write_conflict': '''
        @nki.jit
        def kernel(x):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            buf = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.sbuf)
            for i in nl.affine_range(4):
                buf[...] = nl.load(x)  # <- here
            nl.store(out, buf)
            return out
        ''',
    'index_out_of_bounds': '''
        @nki.jit
        def kernel(x):
            t = nl.load(x[nl.arange(128)[:, None], 32 + nl.arange(64)[None, :]])  # <- here
            return x
        ''',
    'start_partition_alignment': '''
        @nki.jit
        def kernel(x):
            t = nl.load(x)
            u = nl.exp(t[8:72, :])  # <- here
            return x
        ''',
    'stream_shuffle_start_partition': '''
        @nki.jit
        def kernel(x):
            t = nl.load(x)
            u = nl.ndarray((32, 64), dtype=np.float32, buffer=nl.sbuf)
            nisa.nc_stream_shuffle(src=t[3:13, :], dst=u[0:10, :], shuffle_mask=[0] * 32)  # <- here
            return x
        ''',
    'more_than_two_cores': '''
        @nki.jit
        def body(x, out):
            nl.store(out, nl.load(x))

        @nki.jit
        def kernel(x):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            body[nl.nc(4)](x, out)  # <- here
            return out
        ''',
}


class CompileRulesTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.reference = self.ws.reference(SIMPLE_REFERENCE)

    def tearDown(self):
        self.ws.close()

    def test_rule_violations_report_the_kernel_line(self):
        for name, body in BAD_KERNELS.items():
            with self.subTest(rule=name):
                path = self.ws.kernel(body)
                result = self.ws.evaluate(self.reference, path, timing_only=True)
                self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
                expected = line_of(path, '# <- here')
                self.assertEqual(result['line'], expected, result['message'])
                self.assertIn(f':{expected}: ', result['message'])

    def test_stream_shuffle_keeps_its_documented_start_partitions(self):
        """nc_stream_shuffle's API page rounds the active partitions up to 32 and allows starts 0/32/64/96 for 32
        (an ordinary engine access of at most 32 partitions may start anywhere)."""
        path = self.ws.kernel(BAD_KERNELS['stream_shuffle_start_partition'])
        result = self.ws.evaluate(self.reference, path, timing_only=True)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('nc_stream_shuffle: src starts at partition 3; with 32 active partitions', result['message'])

    def assert_compile_error_at_marker(self, call, message, template):
        """The kernel `template` with CALL replaced by `call` is a COMPILE_ERROR naming `message` at its marked
        line."""
        with self.subTest(call=call):
            path = self.ws.kernel(template.replace('CALL', call))
            result = self.ws.evaluate(self.reference, path, timing_only=True)
            self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
            self.assertEqual(result['line'], line_of(path, '# <- here'))
            self.assertIn(message, result['message'])

    def test_an_access_past_the_end_is_named_at_its_own_line(self):
        # the recording run checked a DMA's source or destination, a computed instruction's destination and (under
        # trn1) a dma_transpose's source past the tensor's end only when the instruction was flushed: a later
        # line's error was named instead, and a timing-only trn1 run took the transpose for OK (round 49a)
        template = '''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((64, 64), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
                u = nl.ndarray((128, 96), dtype=x.dtype, buffer=nl.sbuf)
                nisa.memset(dst=u, value=0.0)
                v = nl.ndarray((64, 192), dtype=x.dtype, buffer=nl.sbuf)
                CALL  # <- here
                nisa.dma_copy(dst=out[0:64, -128:0], src=t[0:64, 0:64])
                return out
            '''
        for call, message in (
                ('nisa.dma_copy(dst=u, src=x[0:128, 0:96])', 'index range [0, 95] is out of bounds for a dimension of '
                                                             'size 64'),
                ('nisa.dma_copy(dst=out[0:128, 0:64], src=t)', 'index range [0, 127] is out of bounds'),
                ('nisa.tensor_copy(dst=t[0:128, 0:96], src=u)', 'index range [0, 95] is out of bounds'),
                ('nisa.dma_transpose(dst=v, src=x[0:192, 0:64])', 'index range [0, 191] is out of bounds')):
            self.assert_compile_error_at_marker(call, message, template)

    def test_instructions_run_only_on_their_documented_engines(self):
        # (the timing model runs an explicit engine= as given: ScalarE as a second vector engine made x**8 1.87x
        # faster than the Vector Engine can)
        for call, message in (
                ('nisa.tensor_tensor(t, t, op=nl.multiply, engine=nisa.scalar_engine)',
                 'tensor_tensor runs on the Vector or GpSimd Engine (nki.isa.tensor_tensor page), not on the Scalar '
                 'Engine'),
                ('nisa.scalar_tensor_tensor(data=t, op0=nl.multiply, operand0=1.0, op1=nl.add, operand1=t, '
                 'engine=nisa.scalar_engine)', 'scalar_tensor_tensor runs on the Vector or GpSimd Engine'),
                ('nisa.tensor_scalar(i, op0=nl.bitwise_and, operand0=255, dtype=nl.int32, engine=nisa.scalar_engine)',
                 'with a bitvec operator the instruction must run on the Vector Engine'),
                ('nisa.tensor_scalar(i, op0=nl.multiply, operand0=3, op1=nl.bitwise_and, operand1=255, '
                 'dtype=nl.int32)', 'multiply is an arithmetic operator and bitwise_and a bitvec one'),
                ('nisa.tensor_copy(nisa.nc_matmul(t, t), engine=nisa.gpsimd_engine)',
                 'tensor_copy: the GpSimd engine cannot access PSUM'),
                ('nisa.reciprocal(t, engine=nisa.tensor_engine)', 'the Tensor Engine runs matmuls and transposes only'),
                ('nisa.tensor_copy(t, engine=nisa.tensor_engine)', 'the Tensor Engine runs matmuls and transposes only')):
            self.assert_compile_error_at_marker(call, message, '''
                    @nki.jit
                    def kernel(x):
                        t = nl.load(x[0:64, 0:64])
                        i = nl.copy(t, dtype=nl.int32)
                        r = CALL  # <- here
                        return x
                    ''')
        # the documented engines stay accepted, and a bitvec tensor_scalar left to the compiler runs on VectorE
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                t = nl.load(x[0:64, 0:64])
                i = nl.copy(t, dtype=nl.int32)
                a = nisa.tensor_tensor(t, t, op=nl.multiply, engine=nisa.gpsimd_engine)
                b = nisa.tensor_scalar(t, op0=nl.multiply, operand0=2.0, engine=nisa.scalar_engine)
                c = nisa.tensor_scalar(i, op0=nl.bitwise_and, operand0=255, dtype=nl.int32)
                d = nisa.tensor_copy(nisa.nc_matmul(t, t), engine=nisa.vector_engine)
                return x
            ''')
        _, recorder = self.ws.run(path, np.zeros((128, 64), np.float32), timing_only=True)
        engines = [(fields['op'], fields['eng']) for kind, fields in parse(recorder.text())[1] if kind == 'I']
        self.assertEqual(engines, [('load', 'dma'), ('copy', 'auto'), ('tensor_tensor', 'pool'),
                                   ('tensor_scalar', 'act'), ('tensor_scalar', 'dve'), ('matmul', 'pe'),
                                   ('copy', 'dve')])

    def test_a_reduce_op_the_instructions_page_does_not_list_is_refused(self):
        # (a row max fused into a ScalarE activation was accepted, though its registers only sum)
        for call, message in (
                ('nisa.activation(op=nl.copy, data=t, reduce_op=nl.maximum, reduce_res=r)',
                 'activation: reduce_op maximum is not supported here'),
                ('nisa.activation_reduce(op=nl.exp, data=t, reduce_op=nl.max, reduce_res=r)',
                 'activation: reduce_op max is not supported here'),
                ('nisa.activation(op=nl.copy, data=t, reduce_op=nl.maximum, reduce_cmd=nisa.reduce_cmd.reset_reduce)',
                 'activation: reduce_op maximum is not supported here'),
                ('nisa.select_reduce(predicate=i, on_true=t, on_false=0.0, reduce_op=nl.add, reduce_res=r)',
                 'select_reduce: reduce_op add is not supported here'),
                ('nisa.tensor_scalar_reduce(data=t, op0=nl.multiply, operand0=2.0, reduce_op=nl.divide, '
                 'reduce_res=r)', 'tensor_scalar_reduce: reduce_op divide is not supported here')):
            self.assert_compile_error_at_marker(call, message, '''
                    @nki.jit
                    def kernel(x):
                        t = nl.load(x[0:64, 0:64])
                        i = nl.copy(t, dtype=nl.uint8)
                        r = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.sbuf)
                        a = CALL  # <- here
                        return x
                    ''')
        # the listed operators stay accepted
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                t = nl.load(x[0:64, 0:64])
                i = nl.copy(t, dtype=nl.uint8)
                r = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.sbuf)
                a = nisa.activation(op=nl.copy, data=t, reduce_op=nl.add, reduce_res=r)
                b = nisa.select_reduce(predicate=i, on_true=t, on_false=0.0, reduce_op=nl.max, reduce_res=r)
                c = nisa.tensor_scalar_reduce(data=t, op0=nl.multiply, operand0=2.0, reduce_op=nl.minimum,
                                              reduce_res=r)
                return x
            ''')
        self.assertEqual(self.ws.evaluate(self.reference, path, timing_only=True)['verdict'], 'OK')

    def test_sequential_range_allows_rewriting_a_location(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                buf = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.sbuf)
                for i in nl.sequential_range(4):
                    buf[...] = nl.multiply(nl.load(x), 2.0)
                nl.store(out, buf)
                return out
            ''')
        self.assertEqual(self.ws.evaluate(self.reference, path)['verdict'], 'OK')

    def test_low_precision_ban_ignores_comments(self):
        banned = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                t = nl.load(x, dtype=nl.bfloat16)  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, banned, ban_low_precision=True)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR')
        self.assertEqual(result['line'], line_of(banned, '# <- here'))
        self.assertIn('bfloat16', result['message'])
        commented = self.ws.kernel('''
            # float16 would be faster here, but kernels stay in float32
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            ''')
        self.assertEqual(self.ws.evaluate(self.reference, commented, ban_low_precision=True)['verdict'], 'OK')

    def test_low_precision_ban_covers_every_format_below_float32(self):
        for dtype in ('nl.float8_e4m3', 'nl.float8_e5m2', 'nl.tfloat32', 'nl.float16'):
            with self.subTest(dtype=dtype):
                banned = self.ws.kernel(f'''
                    @nki.jit
                    def kernel(x):
                        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                        nl.store(out, value=nl.copy(nl.load(x), dtype={dtype}))  # <- here
                        return out
                    ''')
                result = self.ws.evaluate(self.reference, banned, ban_low_precision=True)
                self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
                self.assertEqual(result['line'], line_of(banned, '# <- here'))
                self.assertIn('fp16, bf16, tf32 and fp8 are banned', result['message'])

    def test_syntax_error_line(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                t = nl.load(x  # <- here
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR')
        self.assertIn('SyntaxError', result['message'])
        self.assertGreaterEqual(result['line'], line_of(path, '# <- here'))

    def test_a_kernel_that_is_not_text_names_the_line_of_its_first_bad_byte(self):
        good = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))  # caf\u00e9
                return out
            ''')
        with open(good, 'rb') as f:
            data = f.read()
        latin1 = self.ws.write('kernel_latin1.py', '')
        with open(latin1, 'wb') as f:
            f.write(data.replace('caf\u00e9'.encode(), b'caf\xe9'))
        result = self.ws.evaluate(self.reference, latin1)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertEqual(result['line'], line_of(good, '# caf'))
        self.assertIn('not utf-8 text (byte 0xe9', result['message'])
        # The same bytes under a PEP 263 coding line are a valid kernel.
        declared = self.ws.write('kernel_declared.py', '')
        with open(declared, 'wb') as f:
            f.write(b'# -*- coding: latin-1 -*-\n' + data.replace('caf\u00e9'.encode(), b'caf\xe9'))
        self.assertEqual(self.ws.evaluate(self.reference, declared)['verdict'], 'OK')


if __name__ == '__main__':
    unittest.main()
