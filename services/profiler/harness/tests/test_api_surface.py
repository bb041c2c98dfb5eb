"""Documented NKI names and keywords found missing by the API-surface gap analysis (docs/simulator.md, "NKI language
coverage"): each is implemented as its API page describes, or refused with a message naming the cause."""
import unittest
from unittest import mock

import numpy as np

from nki_sim.dtypes import round_to_bf16
from nki_sim.errors import CompileError
from tests.support import Workspace, rel_l2


class ApiSurfaceTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.rng = np.random.default_rng(11)

    def tearDown(self):
        self.ws.close()

    def normal(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float32)

    def refused(self, body, *inputs):
        path = self.ws.kernel(body)
        with self.assertRaises(CompileError) as caught:
            self.ws.run(path, *inputs)
        return caught.exception.message

    def assert_refusals(self, template, cases, *inputs):
        """Each (call, cause): the kernel `template` with CALL replaced by `call` is refused naming `cause`."""
        for call, cause in cases:
            with self.subTest(call=call):
                self.assertIn(cause, self.refused(template.replace('CALL', call), *inputs))

    def test_tensor_tensor_scan_reverses_the_operands(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                s = nisa.tensor_tensor_scan(nl.load(a), nl.load(b), initial=1.0, op0=np.subtract, op1=np.subtract,
                                            reverse0=True, reverse1=True)
                nl.store(out, s)
                return out
            ''')
        a, b = self.normal(128, 20), self.normal(128, 20)
        out, _ = self.ws.run(path, a, b)
        want = np.zeros_like(a)
        prev = np.ones(128, np.float32)
        for i in range(20):
            prev = b[:, i] - (prev - a[:, i])     # reverse0: op0(prev, data0); reverse1: op1(data1, .)
            want[:, i] = prev
        self.assertLess(rel_l2(out, want), 1e-6)

    def test_dma_copy_adds_into_the_destination_with_dst_rmw_op(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=a)
                nisa.dma_copy(dst=out, src=nl.load(b), dst_rmw_op=nl.add)
                return out
            ''')
        a, b = self.normal(128, 32), self.normal(128, 32)
        out, _ = self.ws.run(path, a, b)
        self.assertLess(rel_l2(out, a + b), 1e-7)
        message = self.refused('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=a, dst_rmw_op=nl.multiply)
                return out
            ''', a)
        self.assertIn('dst_rmw_op', message)

    def test_dma_copy_with_dst_rmw_op_scatter_adds_repeated_rows(self):
        path = self.ws.kernel('''
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def kernel(table, ids, y):
                rows, width = table.shape
                n = ids.shape[0]
                out = nl.ndarray((rows, width), dtype=table.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=table)
                ids_sb = nl.ndarray((n, 1), dtype=ids.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ids_sb, src=ids.ap(pattern=[[1, n], [1, 1]], offset=0))
                y_sb = nl.ndarray((n, width), dtype=y.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=y_sb, src=y)
                rows_at = out.ap(pattern=[[width, n], [1, width]], offset=0, vector_offset=ids_sb, indirect_dim=0)
                nisa.dma_copy(dst=rows_at, src=y_sb, dst_rmw_op=nl.add, unique_indices=False)
                return out
            ''')
        table, y = self.normal(40, 16), self.normal(64, 16)
        ids = np.concatenate([np.arange(8), np.arange(8), np.random.randint(0, 40, size=48)]).astype(np.int32)
        out, _ = self.ws.run(path, table, ids, y)
        want = table.copy()
        np.add.at(want, ids, y)
        self.assertLess(rel_l2(out, want), 1e-6)

    @mock.patch('nki_sim.target.nc_version', return_value=4)     # exponential: NeuronCore-v4 only
    def test_tensor_scalar_reduce_and_exponential_load_the_register(self, _):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 2), dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a)
                r = nl.ndarray((128, 2), dtype=np.float32, buffer=nl.sbuf)
                init = nl.full((128, 1), 3.0, dtype=np.float32, buffer=nl.sbuf)
                y = nisa.tensor_scalar_reduce(data=x, op0=np.multiply, operand0=2.0, reduce_op=np.add,
                                              reduce_res=r[:, 0:1], reduce_cmd=nisa.reduce_cmd.load_reduce,
                                              reduce_init=init)
                e = nisa.exponential(x, max_value=1.0, reduce_res=r[:, 1:2], reduce_cmd=nisa.reduce_cmd.load_reduce,
                                     reduce_init=0.5)
                nl.store(out, r)
                return out
            ''')
        a = self.normal(128, 16)
        out, _ = self.ws.run(path, a)
        self.assertLess(rel_l2(out[:, 0], 3.0 + (2 * a).sum(axis=1)), 1e-6)
        self.assertLess(rel_l2(out[:, 1], 0.5 + np.exp(a - 1.0).sum(axis=1)), 1e-6)
        message = self.refused('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
                r = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
                y = nisa.tensor_scalar_reduce(data=nl.load(a), op0=np.multiply, operand0=2.0, reduce_op=np.add,
                                              reduce_res=r, reduce_init=1.0)
                nl.store(out, r)
                return out
            ''', a)
        self.assertIn('load_reduce', message)

    @mock.patch('nki_sim.target.nc_version', return_value=4)     # NeuronCore-v4 only (tests/test_generations.py)
    def test_abs_max_and_abs_min_keep_the_signed_input_of_larger_or_smaller_magnitude(self, _):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray((2,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                x, y = nl.load(a), nl.load(b)
                nl.store(out[0], nl.abs_max(x, y))
                nl.store(out[1], nl.abs_min(x, y))
                return out
            ''')
        a = np.array([[-5.0, 1.0, 2.0, -0.5]] * 4, np.float32)
        b = np.array([[3.0, -1.0, -4.0, 0.25]] * 4, np.float32)
        out, _ = self.ws.run(path, a, b)
        np.testing.assert_array_equal(out[0], [[-5.0, -1.0, -4.0, -0.5]] * 4)     # tie |1| = |-1|: y
        np.testing.assert_array_equal(out[1], [[3.0, -1.0, 2.0, 0.25]] * 4)

    @mock.patch('nki_sim.target.nc_version', return_value=4)     # NeuronCore-v4 only (tests/test_generations.py)
    def test_activate2_stages_activation_and_register_reductions(self, _):
        path = self.ws.kernel('''
            import nki.language as nl2
            @nki.jit
            def kernel(a, s):
                out = nl.ndarray((128, 20), dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a)
                scale = nl.load(s)
                y = nl.ndarray((128, 16), dtype=np.float32, buffer=nl.sbuf)
                r = nl.ndarray((128, 4), dtype=np.float32, buffer=nl.sbuf)
                nisa.activate2(dst=y, op=nl.exp, data=x, imm0=scale, imm1=0.5, op0=nl.multiply, op1=nl.subtract,
                               reverse1=True, reduce_op=nl.maximum, reduce_res=r[:, 0:1],
                               reduce_cmd=nisa.reduce_cmd.reset_reduce)
                z = nl.ndarray((128, 16), dtype=np.float32, buffer=nl.sbuf)
                nisa.activate2(dst=z, op=nl.copy, data=x, imm0=1.0, imm1=0.0, op0=nl.subtract, op1=nl2.bypass,
                               reduce_op=nl.abs_max, reduce_cmd=nisa.reduce_cmd.reset_reduce)
                nisa.activate2(dst=z, op=nl.copy, data=x, imm0=0.0, imm1=0.0, op0=nl2.bypass, op1=nl2.bypass,
                               reduce_op=nl.abs_max, reduce_res=r[:, 1:2], reduce_cmd=nisa.reduce_cmd.reduce)
                nisa.activate2(dst=z, op=nl.square, data=x, imm0=2.0, imm1=0.0, op0=nl.add, op1=nl2.bypass,
                               reduce_op=nl.add, reduce_res=r[:, 2:3], reduce_cmd=nisa.reduce_cmd.reset_reduce)
                nisa.activate2(dst=z, op=nl.copy, data=x, imm0=0.0, imm1=0.0, op0=nl2.bypass, op1=nl2.bypass,
                               reduce_op=nl.add, reduce_res=r[:, 3:4])
                nl.store(out[:, 0:16], y)
                nl.store(out[:, 16:20], r)
                return out
            ''')
        a, s = self.normal(128, 16), self.normal(128, 1)
        out, _ = self.ws.run(path, a, s)
        y = np.exp(0.5 - a * s)
        self.assertLess(rel_l2(out[:, :16], y), 1e-6)
        self.assertLess(rel_l2(out[:, 16], y.max(axis=1)), 1e-6)
        both = np.concatenate([a - 1.0, a], axis=1)        # reduce on top of the first abs_max
        want = np.take_along_axis(both, np.abs(both).argmax(axis=1)[:, None], axis=1)[:, 0]
        self.assertLess(rel_l2(out[:, 17], want), 1e-6)
        square_sum = np.square(a + 2.0).sum(axis=1)
        self.assertLess(rel_l2(out[:, 18], square_sum), 1e-6)
        self.assertLess(rel_l2(out[:, 19], square_sum), 1e-6)      # idle: reads the registers unchanged
        self.assert_refusals('''
            import nki.language as nl2
            @nki.jit
            def kernel(a):
                x = nl.load(a)
                y = nl.ndarray((128, 16), dtype=np.float32, buffer=nl.sbuf)
                r = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
                nisa.activate2(dst=y, op=nl.exp, data=x, imm0=1.0, imm1=1.0, CALL)
                return a
            ''', (('op0=nl.add, op1=nl.add', '(add, add) is not one of the pairs'),
                  ('op0=nl2.bypass, op1=nl2.bypass, reverse0=True', 'reverse0/reverse1 need op0/op1'),
                  ('op0=nl.multiply, op1=nl.add, relu_param=0.1', 'relu_param'),
                  ('op0=nl.multiply, op1=nl.add, reduce_res=r', 'need reduce_op'),
                  ('op0=nl.multiply, op1=nl.add, reduce_op=nl.multiply, reduce_res=r', 'reduce_op'),
                  ('op0=nl.multiply, op1=nl.add, reduce_op=nl.add', 'would be ignored')), a)
        message = self.refused('''
            @nki.jit
            def kernel(a):
                nisa.tensor_scalar(nl.load(a), op0=nl.bypass, operand0=0.0)
                return a
            ''', a)
        self.assertIn('nl.bypass is modelled as the op0/op1 of nisa.activate2 only', message)

    def test_scalar_tensor_tensor_reduces_into_the_registers(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray((128, 18), dtype=a.dtype, buffer=nl.shared_hbm)
                x, y = nl.load(a), nl.load(b)
                r = nl.ndarray((128, 2), dtype=np.float32, buffer=nl.sbuf)
                z = nl.ndarray((128, 16), dtype=np.float32, buffer=nl.sbuf)
                nisa.scalar_tensor_tensor(dst=z, data=x, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=y,
                                          reduce_op=nl.maximum, reduce_res=r[:, 0:1])
                nisa.scalar_tensor_tensor(dst=z, data=x, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=y,
                                          reduce_op=nl.add, reduce_res=r[:, 1:2])
                nisa.scalar_tensor_tensor(dst=z, data=x, op0=nl.subtract, operand0=1.0, op1=nl.multiply, operand1=y,
                                          reduce_op=nl.add, reduce_res=r[:, 1:2], reduce_cmd=nisa.reduce_cmd.reduce)
                nl.store(out[:, 0:16], z)
                nl.store(out[:, 16:18], r)
                return out
            ''')
        a, b = self.normal(128, 16), self.normal(128, 16)
        out, _ = self.ws.run(path, a, b)
        first, second = 2 * a + b, (a - 1.0) * b
        self.assertLess(rel_l2(out[:, :16], second), 1e-6)
        self.assertLess(rel_l2(out[:, 16], first.max(axis=1)), 1e-6)
        self.assertLess(rel_l2(out[:, 17], first.sum(axis=1) + second.sum(axis=1)), 1e-6)
        self.assert_refusals('''
            @nki.jit
            def kernel(a):
                x = nl.load(a)
                r = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
                z = nisa.scalar_tensor_tensor(data=x, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=x, CALL)
                return a
            ''', (('reduce_res=r', 'reduce_res needs reduce_op'),
                  ('reduce_op=nl.subtract, reduce_res=r', 'is not one of nl.add'),
                  ('reduce_op=nl.add, reduce_res=r, reduce_cmd=nisa.reduce_cmd.load_reduce',
                   'load_reduce needs a reduce_init')), a)

    def test_tensor_scalar_reduce_writes_the_negated_registers(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 2), dtype=a.dtype, buffer=nl.shared_hbm)
                r = nl.ndarray((128, 2), dtype=np.float32, buffer=nl.sbuf)
                x = nl.load(a)
                y = nisa.tensor_scalar_reduce(data=x, op0=np.multiply, operand0=2.0, reduce_op=np.add,
                                              reduce_res=r[:, 0:1], reduce_res_negate=True)
                y = nisa.tensor_scalar_reduce(data=x, op0=np.add, operand0=0.0, reduce_op=np.add,
                                              reduce_res=r[:, 1:2], reduce_cmd=nisa.reduce_cmd.reduce)
                nl.store(out, r)
                return out
            ''')
        a = self.normal(128, 16)
        out, _ = self.ws.run(path, a)
        self.assertLess(rel_l2(out[:, 0], -(2 * a).sum(axis=1)), 1e-6)
        self.assertLess(rel_l2(out[:, 1], (2 * a).sum(axis=1) + a.sum(axis=1)), 1e-6)   # registers not negated
        message = self.refused('''
            @nki.jit
            def kernel(a):
                r = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
                y = nisa.tensor_scalar_reduce(data=nl.load(a), op0=np.add, operand0=0.0, reduce_op=np.add,
                                              reduce_res=r, reduce_res_negate=-1)
                return a
            ''', a)
        self.assertIn('reduce_res_negate is True or False', message)

    def test_transposes_cast_to_dtype(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray((a.shape[1], a.shape[0]), dtype=np.float32, buffer=nl.shared_hbm)
                out2 = nl.ndarray((a.shape[1], a.shape[0]), dtype=np.float32, buffer=nl.shared_hbm)
                x = nl.load(a)
                t = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.bfloat16, buffer=nl.sbuf)
                t[...] = nisa.nc_transpose(x, dtype=nl.bfloat16)
                nl.store(out, nl.copy(t, dtype=np.float32))
                nl.store(out2, nl.copy(nl.transpose(x, dtype=nl.bfloat16), dtype=np.float32))
                return out, out2
            ''')
        a = self.normal(64, 96)
        (out, out2), _ = self.ws.run(path, a)
        want = round_to_bf16(np.ascontiguousarray(a.T))
        self.assertFalse(np.array_equal(out, a.T))        # rounded to bfloat16, not the float32 values
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(out2, want)

    def test_matmul_tiling_fields_are_checked_and_keep_the_product(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.shared_hbm)
                p = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.psum)
                p[...] = nisa.nc_matmul(nl.load(a), nl.load(b), tile_position=(64, 0), tile_size=(64, 128))
                nl.store(out, nl.copy(p))
                return out
            ''')
        a, b = self.normal(64, 64), self.normal(64, 128)
        out, _ = self.ws.run(path, a, b)
        self.assertLess(rel_l2(out, a.T @ b), 1e-6)
        message = self.refused('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.shared_hbm)
                p = nisa.nc_matmul(nl.load(a), nl.load(b), tile_position=(32, 0), tile_size=(64, 128))
                nl.store(out, nl.copy(p))
                return out
            ''', a, b)
        self.assertIn('tile_position', message)

    def test_a_tiled_matmul_stationary_must_fit_its_tile(self):
        # nc_matmul page, Tiling mode: "The stationary tile size must not exceed the chosen tile_size" (its partitions
        # on PE rows, its free size on PE columns); a [128, 64] stationary on a 32-row or a 32-column tile was
        # accepted and multiplied in full
        a, b = self.normal(128, 64), self.normal(128, 128)
        body = '''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.shared_hbm)
                p = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=p, stationary=nl.load(a), moving=nl.load(b), tile_position=(0, 0), TILE)
                nl.store(out, nl.copy(p))
                return out
            '''
        for tile, words in (('tile_size=(32, 128)', 'row_size 32 PE rows for its partitions'),
                            ('tile_size=(128, 32)', 'column_size 32 PE columns for its free size')):
            with self.subTest(tile):
                message = self.refused(body.replace('TILE', tile), a, b)
                self.assertIn('the stationary (128 partitions, 64 columns) does not fit tile_size', message)
                self.assertIn(words, message)
                self.assertIn('"The stationary tile size must not exceed the chosen tile_size"', message)
        out, _ = self.ws.run(self.ws.kernel(body.replace('TILE', 'tile_size=(128, 64)')), a, b)
        self.assertLess(rel_l2(out, a.T @ b), 1e-6)

    def test_matmul_tile_size_without_tile_position_is_named_as_such(self):
        # one field without the other: the message names the pairing (it said the empty tile_position was
        # "a multiple of" the tile size), for either one missing, in the Beta 2 dst form
        a, b = self.normal(64, 64), self.normal(64, 128)
        for fields in ('tile_size=(64, 64)', 'tile_position=(0, 0)'):
            message = self.refused(f'''
                @nki.jit
                def kernel(a, b):
                    out = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.shared_hbm)
                    p = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=p, stationary=nl.load(a), moving=nl.load(b), {fields})
                    nl.store(out, nl.copy(p))
                    return out
                ''', a, b)
            self.assertIn('must be both set or not set', message)

    def test_reciprocal_takes_an_engine(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                nl.store(out, nisa.reciprocal(nl.load(a), engine=nisa.vector_engine))
                return out
            ''')
        a = self.rng.uniform(1, 2, (128, 8)).astype(np.float32)
        out, _ = self.ws.run(path, a)
        self.assertLess(rel_l2(out, 1 / a), 1e-7)

    def test_masks_an_instruction_does_not_apply_are_refused(self):
        a = self.normal(128, 16)
        for call in ('nisa.max8(x, mask=(i_p < 8))',):
            message = self.refused(f'''
                @nki.jit
                def kernel(a):
                    out = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.shared_hbm)
                    i_p = nl.arange(128)[:, None]
                    x = nl.load(a)
                    y = {call}
                    return out
                ''', a)
            self.assertIn('mask= is not modelled', message)

    def test_masked_load_transpose2d_reads_the_masked_part_of_a_ragged_edge(self):
        # the mask is over the source's index expressions (the nl.load_transpose2d page's mask parameter): a
        # [300, 200] transpose in 128 x 128 tiles, the edge tiles masked on load and, by the output's bounds, on store
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                rows, cols = x.shape
                out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:128]
                for i in nl.affine_range((rows + 127) // 128):
                    for j in nl.affine_range((cols + 127) // 128):
                        t = nl.load_transpose2d(x[i * 128 + i_p, j * 128 + i_f],
                                                mask=(i * 128 + i_p < rows) & (j * 128 + i_f < cols))
                        nl.store(out[j * 128 + i_p, i * 128 + i_f], t,
                                 mask=(j * 128 + i_p < cols) & (i * 128 + i_f < rows))
                return out
            ''')
        x = self.normal(300, 200)
        out, _ = self.ws.run(path, x)
        np.testing.assert_array_equal(out, x.T)
        # a mask that is not a box: only the lower triangle of the tile is read and written
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((64, 64), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:64, 0:64]
                nl.store(out, nl.zeros((64, 64), dtype=x.dtype))
                t = nl.load_transpose2d(x[i_p, i_f], mask=(i_p >= i_f))
                nl.store(out[i_f, i_p], t[i_f, i_p], mask=(i_p >= i_f))
                return out
            ''')
        x = self.normal(64, 64)
        out, _ = self.ws.run(path, x)
        np.testing.assert_array_equal(out, np.tril(x).T)

    def test_an_mgrid_of_one_slice_is_one_index_as_numpy_gives_it(self):
        # "Same as NumPy mgrid" (the nl.mgrid page): np.mgrid[0:4].shape is (4,), so nl.mgrid[0:n] is one index
        # that takes arithmetic and [:, None] like nl.arange(n) (it was a tuple of one: `+` was a TypeError)
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                i_f = nl.mgrid[0:x.shape[1]][None, :]
                for r in nl.affine_range((x.shape[0] + 127) // 128):
                    row = r * 128 + nl.mgrid[0:128][:, None]
                    t = nl.load(x[row, i_f], mask=(row < x.shape[0]))
                    nl.store(out[row, i_f], nl.multiply(t, 2.0), mask=(row < x.shape[0]))
                return out
            ''')
        x = self.normal(200, 48)
        out, _ = self.ws.run(path, x)
        np.testing.assert_array_equal(out, 2 * x)
        # a one-dimensional tile from it is a tile of that many partitions, refused past 128
        message = self.refused('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                i = nl.mgrid[0:256]
                t = nl.zeros((256,), dtype=x.dtype, buffer=nl.sbuf)
                t[i] = nl.load(x[i])
                nl.store(out[i], t)
                return out
            ''', self.normal(256))
        self.assertIn('partition dimension 256 exceeds 128', message)

    def test_masked_transposes_write_only_the_masked_part_of_the_result(self):
        # the mask is over the [F, P] result: the nki-samples flash attention masks nc_transpose with a causal
        # condition, the neuron-team tiled transpose with the tile's bounds
        a = self.normal(64, 16)
        for call, engine in (('t[...] = nisa.nc_transpose(x, mask=(i_r < 10) & (i_c >= 8))', 'pe'),
                             ('t[...] = nl.transpose(x, mask=(i_r < 10) & (i_c >= 8))', 'pe'),
                             ('t[0:16, 0:16] = nisa.nc_transpose(x[0:16, 0:16], mask=(i_r < 10) & (i_c16 >= 8))',
                              'dve'),
                             ('t[...] = nisa.nc_transpose(x, mask=False)', 'pe')):
            path = self.ws.kernel(f'''
                @nki.jit
                def kernel(a):
                    out = nl.ndarray((16, 64), dtype=a.dtype, buffer=nl.shared_hbm)
                    i_r = nl.arange(16)[:, None]
                    i_c = nl.arange(64)[None, :]
                    i_c16 = nl.arange(16)[None, :]
                    x = nl.load(a)
                    t = nl.full((16, 64), -1.0, dtype=nl.float32, buffer=nl.sbuf)
                    {call}
                    nl.store(out, t)
                    return out
                ''')
            out, trace = self.ws.run(path, a)
            want = np.full((16, 64), -1.0, np.float32)
            cols = 16 if engine == 'dve' else 64
            if 'False' not in call:
                want[0:10, 8:cols] = a.T[0:10, 8:cols]
            np.testing.assert_array_equal(out, want, err_msg=call)

    def test_broadcast_to_takes_its_documented_keywords(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.shared_hbm)
                nl.store(out, nl.copy(nl.broadcast_to(src=nl.load(a), shape=(128, 16))))
                return out
            ''')
        a = self.normal(1, 16)
        out, _ = self.ws.run(path, a)
        np.testing.assert_array_equal(out, np.broadcast_to(a, (128, 16)))

    def test_local_gather_reads_each_cores_indices_partition_first(self):
        src = self.normal(32, 8)
        index = np.array([[7, 0]] * 16 + [[1, 2]] * 16, dtype=np.uint16)
        index[3, 1] = 5
        path = self.ws.kernel('''
            @nki.jit
            def kernel(src, index):
                out = nl.ndarray((32, 20), dtype=src.dtype, buffer=nl.shared_hbm)
                nl.store(out, nisa.local_gather(nl.load(src), nl.load(index), num_valid_indices=20))
                return out
            ''')
        out, _ = self.ws.run(path, src, index)
        for first in (0, 16):
            picks = index[first:first + 16].flatten(order='F')[:20]
            np.testing.assert_array_equal(out[first:first + 16], src[first:first + 16][:, picks])

    def test_local_gather_refuses_what_the_hardware_cannot_do(self):
        src = self.normal(32, 8)
        for call, cause in (('nisa.local_gather(s, i, num_elem_per_idx=3)', 'num_elem_per_idx is one of'),
                            ('nisa.local_gather(s, i, num_valid_indices=33)', 'num_valid_indices 33'),
                            ('nisa.local_gather(s[0:24, :], i[0:24, :])', 'the same multiple of 16')):
            message = self.refused(f'''
                @nki.jit
                def kernel(a):
                    s = nl.load(a)
                    i = nl.zeros((32, 2), dtype=nl.uint16, buffer=nl.sbuf)
                    y = {call}
                    return a
                ''', src)
            self.assertIn(cause, message)
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray((32, 64), dtype=a.dtype, buffer=nl.shared_hbm)
                i = nl.full((32, 2), 7, dtype=nl.uint16, buffer=nl.sbuf)
                nl.store(out, nisa.local_gather(nl.load(a), i, num_elem_per_idx=2))
                return out
            ''')
        with self.assertRaisesRegex(IndexError, 'reads outside the 8 elements'):
            self.ws.run(path, src)

    def test_dma_compute_refuses_what_its_api_page_does_not_allow(self):
        a = self.normal(128, 16)
        for call, cause in (('nisa.dma_compute(t, [a, a], [1.0, 0.5], nl.add)', 'one scale of 1.0 per source'),
                            ('nisa.dma_compute(t, [a, a], reduce_op=nl.multiply)', 'allows nl.add only'),
                            ('nisa.dma_compute(t, [t, t], reduce_op=nl.add)', 'dst appears more than once'),
                            ('nisa.dma_compute(t, a, reduce_op=nl.add)', 'srcs is a list'),
                            ('nisa.dma_compute(t, [a[0:64, :]], reduce_op=nl.add)', 'does not match destination'),
                            ("nisa.dma_compute(t, [a], reduce_op=nl.add, oob_mode='wrap')",
                             "dma_compute: oob_mode='wrap' is not an oob_mode")):
            message = self.refused(f'''
                @nki.jit
                def kernel(a):
                    t = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
                    {call}
                    return a
                ''', a)
            self.assertIn(cause, message)

    def test_a_mask_true_at_every_index_masks_nothing_and_is_accepted(self):
        # a boundary mask on a tile the shapes fill (`i_p < 128` on 128 partitions) leaves nothing to mask off
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a):
                out = nl.ndarray((16, 128), dtype=a.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(16)[None, :]
                nl.store(out, nl.transpose(nl.load(a), mask=(i_p < 128) & (i_f < 16)))
                return out
            ''')
        a = self.normal(128, 16)
        out, _ = self.ws.run(path, a)
        np.testing.assert_array_equal(out, a.T)

    def test_collectives_custom_ops_and_gather_axes_name_their_cause(self):
        a = self.normal(128, 16)
        for call, cause in (('nisa.sendrecv(a)', 'collectives'), ('nl.all_reduce(a)', 'collectives'),
                            ('nisa.builtin_custom_op("f", "lib", 1, 1, [a], [a])', 'no documented semantics'),
                            ('nl.gather_flattened(nl.load(a), nl.load(a), axis=1)', 'axis=1')):
            message = self.refused(f'''
                @nki.jit
                def kernel(a):
                    y = {call}
                    return a
                ''', a)
            self.assertIn(cause, message)

    def test_audited_names_refused_with_their_cause(self):
        """The API audit (docs/simulator.md, "API audit"): documented names the simulator does not model, each refused
        naming why (before: "is not supported by the simulator" with no cause)."""
        self.assert_refusals('''
            @nki.jit
            def kernel(a):
                y = CALL
                return a
            ''', (('nisa.VirtualRegister()', 'virtual registers and data-dependent control flow'),
                  ('nl.gemm_grid()', 'with neither parameters nor a result'),
                  ('nl.gemm_stationary_grid()', 'with neither parameters nor a result'),
                  ('nl.bfp16.min', 'bit pattern 0xff80, which is negative infinity'),
                  ('nl.prelu', "takes its negative slope from nisa.activate2's relu_param"),
                  ('nl.load(a).reinterpret_cast', 'lists it as a bare attribute, without documentation'),
                  ('nl.load(a).is_identity()', 'the newest stub has is_contiguous() instead'),
                  ('nl.load(a).sim_value', "NKI's own CPU simulator computed")), self.normal(128, 16))

    def test_memory_region_alignments_static_cast_and_validation_error(self):
        """nl.MemoryRegion (the NKI 2.32+ language stub), nl.tile_size.psum_min_align / sbuf_min_align (every
        tile_size page; the values are the NKI front end's), nl.static_cast (the Beta 1 language source) and
        nisa.NkiValidationError (the NKI 0.3+ isa stub) were unsupported names (AttributeError for the two
        tile_size fields)."""
        path = self.ws.kernel('''
            import nki.language as nl2
            import nki.isa as nisa2

            @nki.jit
            def kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl2.MemoryRegion.shared_hbm)
                t = nl.load(a)
                assert nl2.MemoryRegion.sbuf is nl.sbuf and nl2.MemoryRegion.psum is nl.psum
                assert isinstance(out.buffer, nl2.MemoryRegion) and isinstance(nl.sbuf, nl2.MemoryRegion)
                assert not isinstance(t, nl2.MemoryRegion)
                assert (nl.tile_size.psum_min_align, nl.tile_size.sbuf_min_align) == (4, 1)
                scale = nl.static_cast(np.array([1.00390625, 2.5]), nl.bfloat16)
                assert scale.tolist() == [1.0, 2.5], scale
                assert nl.static_cast(3.7, nl.int32) == 3 and issubclass(nisa2.NkiValidationError, Exception)
                nl.store(out, nl.multiply(t, float(scale[1])))
                return out
            ''')
        a = self.normal(128, 16)
        out, _ = self.ws.run(path, a)
        np.testing.assert_array_equal(out, a * 2.5)
        message = self.refused('''
            @nki.jit
            def kernel(a):
                y = nl.static_cast(nl.load(a), nl.bfloat16)
                return a
            ''', a)
        self.assertIn('casts a Python or numpy scalar or array at trace time', message)

    def test_dma_engine_is_an_engine(self):
        import neuronxcc.nki.isa as nisa
        self.assertIs(nisa.engine.dma, nisa.dma_engine)

    def test_a_mutable_argument_is_written_in_place_and_returned(self):
        # `nt.tensor[nt.mutable]` (experimental_flags='enable-mutable-parameter'): public kv-cache and rolling-buffer
        # kernels scatter rows into an argument and return it
        path = self.ws.kernel('''
            import neuronxcc.nki.typing as nt

            @nki.jit(experimental_flags='enable-mutable-parameter')
            def kernel(cache: nt.tensor[nt.mutable], rows: nt.tensor, slots: nt.tensor):
                i_p = nl.arange(rows.shape[0])[:, None]
                i_f = nl.arange(rows.shape[1])[None, :]
                idx = nl.load(slots.reshape((rows.shape[0], 1)))
                nl.store(cache[idx[i_p, 0], i_f], value=nl.load(rows))
                return cache
            ''')
        cache, rows = self.normal(16, 8), self.normal(4, 8)
        slots = np.array([3, 0, 9, 14], np.int32)
        out, _ = self.ws.run(path, cache.copy(), rows, slots)
        want = cache.copy()
        want[slots] = rows
        np.testing.assert_array_equal(out, want)

    def test_a_mutable_tensor_annotated_output_argument_is_written(self):
        # `nt.mutable_tensor`, the type the NKI Library API pages give output arguments the kernel writes
        # (router_topk's router_logits: "Output router logits ... in HBM", type ``nt.mutable_tensor``); torch-neuronx's
        # README annotates its kernel's output so (before: "AttributeError: module 'neuronxcc.nki.typing' has no
        # attribute 'mutable_tensor'" when the kernel file was imported)
        for typing_module in ('neuronxcc.nki.typing', 'nki.typing'):
            with self.subTest(typing_module=typing_module):
                path = self.ws.kernel(f'''
                    import {typing_module} as nt

                    @nki.jit
                    def kernel(x, y: nt.mutable_tensor):
                        nl.store(y, value=nl.add(nl.load(x), 1.0))
                        return y
                    ''')
                x = self.normal(128, 32)
                out, _ = self.ws.run(path, x, np.zeros_like(x))
                np.testing.assert_array_equal(out, x + np.float32(1.0))

    def test_nki_compiler_per_kernel_configs_are_accepted_and_checked(self):
        # NKI 0.7 (the nki.jit and nki.compiler pages of Neuron 2.33.1): `@nki.jit(compile_config=CompileConfig(
        # non_ssa_legalization=True))`; CompileConfig / SpecializationConfig / AddressRotation were an ImportError
        header = 'import numpy as np\nimport nki\nimport nki.language as nl\nimport nki.isa as nisa\n'
        template = """
            from nki.compiler import AddressRotation, CompileConfig, SpecializationConfig

            @nki.jit(OPTIONS)
            def kernel(x):
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=1.0)
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=t)
                return out
            """
        x = self.normal(128, 64)
        for options in ('compile_config=CompileConfig(non_ssa_legalization=True)',
                        'compile_config=CompileConfig(address_rotation=AddressRotation.DISABLE, dead_code_elim=False, '
                        'barrier_check=True, prefetch_auto=False, nki_alloc_fallback=True), '
                        'specialization_config=SpecializationConfig(allow_nested_config_override=True)'):
            with self.subTest(options=options):
                out, _ = self.ws.run(self.ws.kernel(template.replace('OPTIONS', options), header=header), x)
                np.testing.assert_allclose(out, 2.0 * x + 1.0, rtol=1e-6)
        for options, cause in (('compile_config=CompileConfig(non_ssa=True)', "has no option 'non_ssa'"),
                               ('compile_config=CompileConfig(True)', 'takes its options by keyword'),
                               ("compile_config=CompileConfig(barrier_check='yes')",
                                'its API page types the option bool'),
                               ('compile_config=CompileConfig(address_rotation=True)',
                                'types the option AddressRotation'),
                               ('compile_config=SpecializationConfig()', 'takes a nki.compiler.CompileConfig'),
                               ("specialization_config={'allow_nested_config_override': True}",
                                'takes a nki.compiler.SpecializationConfig')):
            with self.subTest(options=options):
                path = self.ws.kernel(template.replace('OPTIONS', options), header=header)
                with self.assertRaises(CompileError) as caught:
                    self.ws.run(path, x)
                self.assertIn(cause, caught.exception.message)


if __name__ == '__main__':
    unittest.main()
