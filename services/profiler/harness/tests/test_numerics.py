"""Numerical semantics of the simulated NKI API, on small self-written kernels."""
import re
import unittest

import numpy as np

from tests.support import STANDARD_TRANSFORMS, Workspace, rel_l2


class NumericsTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.rng = np.random.default_rng(7)

    def tearDown(self):
        self.ws.close()

    def normal(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float32)

    def test_elementwise_and_tile_operators(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a)
                y = nl.load(b)
                z = nl.multiply(nl.add(x, y), 2.0) - y / 4.0
                w = nl.exp(z * 0.1)
                nl.store(out, value=nl.maximum(w, x))
                return out
            ''')
        a, b = self.normal(64, 96), self.normal(64, 96)
        out, _ = self.ws.run(path, a, b)
        z = (a + b) * 2.0 - b / 4.0
        np.testing.assert_allclose(out, np.maximum(np.exp(z * 0.1), a), rtol=1e-6)

    def test_matmul_with_psum_accumulation(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a_t, b):
                K, M = a_t.shape
                _, N = b.shape
                out = nl.ndarray((M, N), dtype=np.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((nl.par_dim(M), N), dtype=np.float32, buffer=nl.psum)
                for k in nl.affine_range(K // 128):
                    lhs = nl.load(a_t[k * 128:(k + 1) * 128, :])
                    rhs = nl.load(b[k * 128:(k + 1) * 128, :])
                    acc += nisa.nc_matmul(lhs, rhs)
                nl.store(out, value=nl.copy(acc))
                return out
            ''')
        a_t, b = self.normal(384, 128), self.normal(384, 256)
        out, _ = self.ws.run(path, a_t, b)
        self.assertLess(rel_l2(out, a_t.T @ b), 1e-6)

    def test_nl_matmul_and_transposes(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x, y, ident):
                out = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.shared_hbm)
                out_t = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.shared_hbm)
                back = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.shared_hbm)
                xt = nl.load(x)
                res = nl.zeros((128, 64), nl.float32, buffer=nl.psum)
                res += nl.matmul(xt, nl.load(y))
                nl.store(out, value=res)
                eye = nl.load(ident)
                tr = nisa.nc_matmul(nl.load(y), eye, is_transpose=True, is_moving_onezero=True)
                tr_sb = nl.copy(tr)
                nl.store(out_t, value=tr_sb)
                nl.store(back, value=nl.copy(nisa.nc_transpose(tr_sb)))
                return out, out_t, back
            ''')
        x, y = self.normal(128, 128), self.normal(128, 64)
        (out, out_t, back), _ = self.ws.run(path, x, y, np.identity(128, dtype=np.float32))
        self.assertLess(rel_l2(out, x @ y), 1e-6)
        np.testing.assert_array_equal(out_t, y.T)
        np.testing.assert_array_equal(back, y)

    def test_softmax_with_reductions_and_activation_bias(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                neg_max = nisa.tensor_reduce(nl.max, t, axis=[1], negate=True)
                total = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
                e = nisa.activation(op=nl.exp, data=t, bias=neg_max, scale=1.0,
                                    reduce_op=nl.add, reduce_res=total[...])
                inv = nisa.reciprocal(total)
                nl.store(out, value=nisa.tensor_scalar(e, np.multiply, inv))
                return out
            ''')
        x = self.normal(128, 300)
        out, _ = self.ws.run(path, x)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        self.assertLess(rel_l2(out, e / e.sum(axis=1, keepdims=True)), 1e-6)

    def test_rmsnorm_with_broadcast(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x, g):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                ix = nl.arange(128)[:, None]
                iy = nl.arange(x.shape[1])[None, :]
                g_tile = nl.load(g.reshape((1, x.shape[1]))[nl.arange(1)[:, None], iy])
                for i in nl.affine_range(x.shape[0] // 128):
                    t = nl.load(x[i * 128 + ix, iy])
                    ms = nl.mean(nl.square(t), axis=[1])
                    r = nl.rsqrt(nl.add(ms, 1e-5))
                    y = nl.multiply(t, r)
                    nl.store(out[i * 128 + ix, iy], value=nl.multiply(y, g_tile.broadcast_to((128, x.shape[1]))))
                return out
            ''')
        x, g = self.normal(256, 200), self.normal(200)
        out, _ = self.ws.run(path, x, g)
        want = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5) * g
        self.assertLess(rel_l2(out, want), 1e-6)

    def test_masked_loads_and_stores_clip_out_of_range_rows(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                rows, cols = x.shape
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                ip = nl.arange(128)[:, None]
                jf = nl.arange(cols)[None, :]
                for i in nl.affine_range((rows + 127) // 128):
                    t = nl.load(x[i * 128 + ip, jf], mask=(i * 128 + ip < rows))
                    u = nisa.tensor_scalar(t, np.add, 1.0, mask=(i * 128 + ip < rows))
                    one = nl.full((128, 1), 1.0, dtype=np.float32, buffer=nl.sbuf)
                    v = nisa.activation(op=nl.copy, data=u, bias=one, scale=2.0, mask=(i * 128 + ip < rows))
                    nl.store(out[i * 128 + ip, jf], value=v, mask=(i * 128 + ip < rows))
                return out
            ''')
        x = self.normal(300, 40)
        out, recorder = self.ws.run(path, x)
        np.testing.assert_allclose(out, (x + 1.0) * 2.0 + 1.0, rtol=1e-6)
        last_load = [l for l in recorder.lines if ' op=load ' in l][-1]
        self.assertIn(f'bytes={44 * 40 * 4}', last_load)

    def test_general_mask_and_affine_select(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:64, 0:64]
                t = nl.load(x)
                lower = nisa.affine_select(i_p - i_f >= 0, t, -1.0)
                nl.store(out, value=lower)
                return out
            ''')
        x = self.normal(64, 64)
        out, _ = self.ws.run(path, x)
        np.testing.assert_array_equal(out, np.where(np.tri(64, dtype=bool), x, -1.0))

    def test_loop_reduce_accumulates_over_listed_loops(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((nl.par_dim(128), 1), dtype=np.float32, buffer=nl.sbuf)
                part = nl.ndarray((4, 2, nl.par_dim(128), 1), dtype=np.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    for j in nl.affine_range(2):
                        t = nl.load(x[:, nl.ds((2 * i + j) * 64, 64)])
                        part[i, j, nl.arange(128)[:, None], 0] = nisa.tensor_reduce(np.max, t, axis=[1])
                        acc[nl.arange(128)[:, None], 0] = nl.loop_reduce(
                            part[i, j, nl.arange(128)[:, None], 0], op=np.max, loop_indices=[i, j])
                nl.store(out, value=acc)
                return out
            ''')
        x = self.normal(128, 512)
        out, _ = self.ws.run(path, x)
        np.testing.assert_array_equal(out[:, 0], x.max(axis=1))

    def test_tensor_tensor_scan_and_sbuf_accumulation(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                acc = nl.zeros((nl.par_dim(128), a.shape[1]), dtype=np.float32, buffer=nl.sbuf)
                for k in nl.affine_range(2):
                    s = nisa.tensor_tensor_scan(nl.load(a), nl.load(b), initial=0.0, op0=np.multiply, op1=np.add)
                    acc[0:128, 0:a.shape[1]] += s
                nl.store(out, acc)
                return out
            ''')
        a = self.rng.uniform(0.5, 1.0, (128, 50)).astype(np.float32)
        b = self.normal(128, 50)
        out, _ = self.ws.run(path, a, b)
        want = np.zeros_like(a)
        prev = np.zeros(128, np.float32)
        for i in range(50):
            prev = a[:, i] * prev + b[:, i]
            want[:, i] = prev
        self.assertLess(rel_l2(out, 2 * want), 1e-6)

    def test_bn_stats_aggregate_to_mean_and_variance(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 2), dtype=np.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                stats = nl.ndarray((128, 12), dtype=np.float32, buffer=nl.sbuf)
                stats[:, 0:6] = nisa.bn_stats(t[:, 0:500])
                stats[:, 6:12] = nisa.bn_stats(t[:, 500:1000])
                nl.store(out, value=nisa.bn_aggr(stats))
                return out
            ''')
        x = self.normal(128, 1000)
        out, _ = self.ws.run(path, x)
        np.testing.assert_allclose(out[:, 0], x.mean(axis=1), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(out[:, 1], x.var(axis=1), rtol=1e-4)

    def test_spmd_grid_iota_and_3d_index_patterns(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((2, 128, 8, 16), dtype=np.float32, buffer=nl.shared_hbm)
                pid = nl.program_id(0)
                t = nl.ndarray((nl.par_dim(128), 128), dtype=np.float32, buffer=nl.sbuf)
                t[nl.arange(128)[:, None, None], 16 * nl.arange(8)[None, :, None] + nl.arange(16)[None, None, :]] = \\
                    nl.load(x[pid, nl.arange(128)[:, None, None], nl.arange(8)[None, :, None],
                              nl.arange(16)[None, None, :]])
                ramp = nisa.iota(nl.arange(128)[None, :] + 0 * nl.arange(128)[:, None], dtype=np.float32)
                nl.store(out[pid], value=nl.add(t, ramp).reshape((128, 8, 16)))
                return out
            ''')
        from tests.support import load_module
        module = load_module(path, 'spmd_kernel')
        x = self.normal(2, 128, 8, 16)
        out = module.kernel[2](x)
        ramp = np.broadcast_to(np.arange(128, dtype=np.float32), (128, 128)).reshape(128, 8, 16)
        np.testing.assert_allclose(out, x + ramp)

    def test_dma_copy_load_transpose2d_and_tensor_copy(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((64, 128), dtype=np.float32, buffer=nl.shared_hbm)
                scratch = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.hbm)
                t = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=scratch, src=nisa.tensor_copy(t, engine=nisa.vector_engine))
                nl.store(out, value=nl.load_transpose2d(scratch))
                return out
            ''')
        x = self.normal(128, 64)
        out, recorder = self.ws.run(path, x)
        np.testing.assert_array_equal(out, x.T)
        dma = [line for line in recorder.lines if 'op=dma_copy' in line]
        self.assertIn('dir=load', dma[0])
        self.assertIn('dir=store', dma[1])
        self.assertIn('hbm=scratch', dma[1])
        self.assertIn('run=4 ', [line for line in recorder.lines if ' op=load ' in line][0])


if __name__ == '__main__':
    unittest.main()


class MaskedSelectAndNestedViewTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.rng = np.random.default_rng(11)

    def test_masked_affine_select_evaluates_the_predicate_at_each_elements_own_index(self):
        # the mask keeps partitions 64..127 and columns 0..95: the predicate (p >= f) must hold at (p, f) there,
        # not at the element's offset inside the mask window; a mask of False runs nothing
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:128]
                t = nl.load(x)
                res = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
                res[...] = nl.copy(t)
                res[...] = nisa.affine_select(pred=(i_p >= i_f), on_true_tile=t, on_false_value=-1.0,
                                              mask=(i_p >= 64) & (i_f < 96))
                res[...] = nisa.affine_select(pred=(i_p >= i_f), on_true_tile=t, on_false_value=-2.0, mask=False)
                # the pattern form: p - f >= 0, columns 100..127 only
                res[...] = nisa.affine_select(pattern=[[-1, 128]], offset=0, channel_multiplier=1, on_true_tile=res,
                                              on_false_value=-3.0, cmp_op=nl.greater_equal, mask=(i_f >= 100))
                nl.store(out, value=res)
                return out
            ''')
        x = self.rng.standard_normal((128, 128)).astype(np.float32)
        out, _ = self.ws.run(path, x)
        p, f = np.indices((128, 128))
        want = np.where((p >= 64) & (f < 96) & (p < f), -1.0, x)
        want = np.where((f >= 100) & (p < f), -3.0, want)
        np.testing.assert_array_equal(out, want)

    def test_writes_through_a_subscript_of_a_subscript_are_told_apart(self):
        body = '''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((2, 128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for b in nl.affine_range(2):
                    out_b = out[b]
                    for j in nl.affine_range(2):
                        t = nl.load(x[b, :, nl.ds(j * 256, 256)])
                        nl.store(out_b[:, {columns}], value=nl.multiply(t, 2.0))
                return out
            '''
        x = self.rng.standard_normal((2, 128, 512)).astype(np.float32)
        out, _ = self.ws.run(self.ws.kernel(body.format(columns='nl.ds(j * 256, 256)')), x)
        np.testing.assert_array_equal(out, x * 2.0)
        with self.assertRaisesRegex(Exception, 'Unexpected output dependencies'):
            self.ws.run(self.ws.kernel(body.format(columns='0:256')), x)


class MaskThatKeepsNothingTest(unittest.TestCase):
    """`mask=False` (a mask that keeps no element, as nki-samples' allocated_fused_rms_norm_qkv gives the second row
    tile of its double buffer when the sequence has an odd number of 128-row tiles): the instruction computes and
    writes nothing; reductions and the accumulation registers (reduce_res) over the empty window must not fail."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.rng = np.random.default_rng(5)

    def test_reductions_under_a_false_mask_write_nothing(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                acc = nl.full((128, 6), fill_value=7.0, dtype=nl.float32, buffer=nl.sbuf)
                off = False
                acc[:, 0:1] = nl.max(t, axis=1, keepdims=True, mask=off)
                acc[:, 1:2] = nisa.tensor_reduce(np.add, t, axis=(1,), mask=off)
                r = nl.full((128, 1), fill_value=3.0, dtype=nl.float32, buffer=nl.sbuf)
                e = nisa.activation_reduce(op=nl.exp, data=t, reduce_op=np.add, reduce_res=r, mask=off)
                acc[:, 2:3] = nl.copy(r)
                s = nl.full((128, 64), fill_value=2.0, dtype=nl.float32, buffer=nl.sbuf)
                s[...] = nisa.tensor_tensor_scan(t, t, initial=0.0, op0=np.multiply, op1=np.add, mask=off)
                acc[:, 3:4] = nl.copy(s[:, 0:1])
                acc[:, 4:5] = nisa.tensor_reduce(np.add, t, axis=(1,), mask=(nl.arange(128)[:, None] < 64))
                nl.store(out, value=acc)
                return out
            ''')
        x = self.rng.standard_normal((128, 64)).astype(np.float32)
        out, _ = self.ws.run(path, x)
        want = np.full((128, 6), 7.0, dtype=np.float32)
        want[:, 2] = 3.0
        want[:, 3] = 2.0
        want[:64, 4] = x[:64].sum(axis=1)
        np.testing.assert_allclose(out, want, rtol=1e-5)


class SequenceBoundsTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_segment_starts_and_ends_with_padding(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(ids):
                out = nl.ndarray((1, 2, ids.shape[1]), dtype=nl.int32, buffer=nl.shared_hbm)
                bounds = nisa.sequence_bounds(segment_ids=nl.load(ids), dtype=nl.int32)
                nl.store(out, value=bounds)
                return out
            ''')
        ids = np.array([[0, 1, 1, 2, 2, 2, 0, 3, 3]], dtype=np.float32)
        out, _ = self.ws.run(path, ids)
        np.testing.assert_array_equal(out, [[[9, 1, 1, 3, 3, 3, 9, 7, 7], [-1, 3, 3, 6, 6, 6, -1, 9, 9]]])
        two_rows = self.ws.kernel('''
            @nki.jit
            def kernel(ids):
                return nisa.sequence_bounds(segment_ids=nl.load(ids))
            ''')
        with self.assertRaisesRegex(Exception, 'segment ids have one partition'):
            self.ws.run(two_rows, np.zeros((2, 9), np.float32))


class NonzeroWithCountTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_gpsimd_partitions_only_with_offset_padding_and_count(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((x.shape[0], x.shape[1] + 1), dtype=nl.int32, buffer=nl.shared_hbm)
                found = nl.ndarray((x.shape[0], x.shape[1] + 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=found, value=7)
                nisa.nonzero_with_count(dst=found, src=nl.load(x), index_offset=100, padding_val=-2)
                nl.store(out, value=found)
                return out
            ''')
        x = np.zeros((40, 6), np.float32)
        x[0, [1, 4]] = 3.0
        x[16, :] = -1.0
        x[1, 0] = 5.0          # partition 1 is not read by a GpSimd core: its row stays as it was
        out, _ = self.ws.run(path, x)
        np.testing.assert_array_equal(out[0], [101, 104, -2, -2, -2, -2, 2])
        np.testing.assert_array_equal(out[16], [100, 101, 102, 103, 104, 105, 6])
        np.testing.assert_array_equal(out[32], [-2] * 6 + [0])
        untouched = [p for p in range(40) if p % 16]
        np.testing.assert_array_equal(out[untouched], 7)

    def test_dst_is_one_element_longer_than_src(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                found = nl.ndarray((x.shape[0], x.shape[1]), dtype=nl.int32, buffer=nl.sbuf)
                nisa.nonzero_with_count(dst=found, src=nl.load(x))
                return x
            ''')
        with self.assertRaisesRegex(Exception, 'one more element per partition'):
            self.ws.run(path, np.zeros((16, 6), np.float32))



TOPK_BETA2_HEADER = '''import numpy as np
import nki
import nki.language as nl
import nki.isa as nisa
'''


class TopkTest(unittest.TestCase):
    """nisa.topk, as the v2.33.0 API page defines it: one problem per 16-partition group, read and written in the
    snake layout (element s at partition s % 16, free position s // 16), k = val_dst's free size; the simulator
    writes rank j (descending) at snake position j and leaves the slots of the last position past k as they were.
    Before: `nisa.topk is not supported by the simulator`."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    KERNEL = '''
        @nki.jit
        def kernel(x):
            out = nl.ndarray((x.shape[0], 4), dtype=nl.float32, buffer=nl.shared_hbm)
            src = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=src, src=x)
            val = nl.ndarray((x.shape[0], 20), dtype=nl.bfloat16, buffer=nl.sbuf)
            idx = nl.ndarray((x.shape[0], 20), dtype=nl.uint32, buffer=nl.sbuf)
            nisa.memset(dst=val, value=-1.0)
            nisa.memset(dst=idx, value=7)
            TOPK
            both = nl.ndarray((x.shape[0], 4), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=both[:, 0:2], src=val[:, 0:2])
            nisa.tensor_copy(dst=both[:, 2:4], src=idx[:, 0:2])
            nisa.dma_copy(dst=out, src=both)
            return out
        '''

    # 2 groups, n 100 of the 128 snake positions, k 20: positions 0 and 1 of val and idx are written, rank j at
    # partition j % 16 of its group, position j // 16; the last position's slots past k keep the memset values
    REFERENCE = '''
def get_inputs():
    return [np.stack([np.random.permutation(256)[:8] for _ in range(32)]).astype(np.float32)]


def forward(x):
    want = np.full((32, 4), -1.0, np.float32)
    want[:, 2:] = 7
    for g in range(2):
        snake = x[16 * g:16 * (g + 1)].T.reshape(-1)[:100]
        order = np.argsort(-snake, kind='stable')
        for j in range(20):
            want[16 * g + j % 16, j // 16] = snake[order[j]]
            want[16 * g + j % 16, 2 + j // 16] = order[j]
    return want
''' + STANDARD_TRANSFORMS

    def run_topk(self, call, x):
        path = self.ws.kernel(self.KERNEL.replace('TOPK', call), header=TOPK_BETA2_HEADER)
        return self.ws.run(path, x)[0]

    def test_each_group_of_16_partitions_in_snake_layout(self):
        """Through the evaluation, which replays the recorded program (nisa.topk is one of its calls), by keyword
        and by position."""
        reference = self.ws.reference(self.REFERENCE)
        for call in ('nisa.topk(val_dst=val, idx_dst=idx, src=src, n=100)', 'nisa.topk(val, idx, src, 100, True)'):
            with self.subTest(call=call):
                kernel = self.ws.kernel(self.KERNEL.replace('TOPK', call), header=TOPK_BETA2_HEADER)
                result = self.ws.evaluate(reference, kernel)
                self.assertEqual(result['verdict'], 'OK', result['message'])
                self.assertEqual(result['max_rel_l2'], 0.0)

    def test_the_pages_constraints(self):
        x = np.zeros((32, 8), np.float32)
        for call, message in (('nisa.topk(val_dst=val, idx_dst=idx, src=src, n=129)',
                               'fewer than ceil(n / 16) = 9'),
                              ('nisa.topk(val_dst=val, idx_dst=idx, src=src, n=19)', 'k <= n (19)'),
                              ('nisa.topk(val_dst=val, idx_dst=idx[0:16, :], src=src, n=100)', 'partitions'),
                              ('nisa.topk(val_dst=idx, idx_dst=idx, src=src, n=100)', 'val_dst must be bfloat16')):
            with self.subTest(call=call):
                with self.assertRaisesRegex(Exception, re.escape(message)):
                    self.run_topk(call, x)

class BroadcastFunctionTest(unittest.TestCase):
    def test_nl_broadcast_to_takes_a_tile(self):
        ws = Workspace()
        self.addCleanup(ws.close)
        path = ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, nl.broadcast_to(nl.load(x), shape=(128, x.shape[1])))
                return out
            ''')
        x = np.arange(64, dtype=np.float32).reshape(1, 64)
        out, _ = ws.run(path, x)
        np.testing.assert_array_equal(out, np.repeat(x, 128, axis=0))


class ReductionAxesTest(unittest.TestCase):
    """nisa.tensor_reduce reduces consecutive free axes that include the most minor one; the API pages number
    them either ending at the last dimension (axis=2 of a (P, A, B) tile) or, on the earlier pages, counting from
    the most minor axis (axis=1 of a (P, A, B) tile is B, as the NKI Library's cascaded max writes it)."""

    def setUp(self):
        self.ws = Workspace()

    def tearDown(self):
        self.ws.close()

    def test_both_numberings_reduce_the_most_minor_axes(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                p, a, b = x.shape
                last = nl.ndarray((p, a), dtype=x.dtype, buffer=nl.shared_hbm)
                minor = nl.ndarray((p, a), dtype=x.dtype, buffer=nl.shared_hbm)
                both = nl.ndarray((p, 1), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                nl.store(last, value=nisa.tensor_reduce(op=nl.add, data=t, axis=2))
                nl.store(minor, value=nisa.tensor_reduce(op=nl.maximum, data=t, axis=1))
                nl.store(both, value=nisa.tensor_reduce(op=nl.add, data=t, axis=[1, 2]))
                return last, minor, both
            ''')
        x = np.random.default_rng(3).standard_normal((16, 6, 7)).astype(np.float32)
        (last, minor, both), _ = self.ws.run(path, x)
        np.testing.assert_allclose(last, x.sum(axis=2), rtol=1e-5)
        np.testing.assert_allclose(minor, x.max(axis=2))
        np.testing.assert_allclose(both, x.sum(axis=(1, 2))[:, None], rtol=1e-5)

    def test_other_axes_keep_numpys_meaning(self):
        """Axes that are not consecutive from 1 short of the last dimension reduce what numpy reduces (a public
        max-pool reduces axis=(1, 3) of a (P, A, B, C) tile, keeping B)."""
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                p, a, b, c = x.shape
                out = nl.ndarray((p, b), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nisa.tensor_reduce(op=nl.maximum, data=nl.load(x), axis=(1, 3)))
                return out
            ''')
        x = np.random.default_rng(4).standard_normal((16, 2, 3, 4)).astype(np.float32)
        out, _ = self.ws.run(path, x)
        np.testing.assert_allclose(out, x.max(axis=(1, 3)))
