"""The instruction trace honours TRACE_FORMAT.md and is the same with and without numerics."""
import itertools
import random
import unittest

import numpy as np

from nki_sim import target
from nki_sim.trace import lattice_overlap
from tests.support import Workspace

PIPELINE_KERNEL = '''
    @nki.jit
    def kernel(x, ident):
        rows, cols = x.shape
        out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
        eye = nl.load(ident)
        tiles = nl.ndarray((rows // 128, nl.par_dim(128), cols), dtype=np.float32, buffer=nl.sbuf)
        for r in nl.affine_range(rows // 128):
            tiles[r, nl.arange(128)[:, None], nl.arange(cols)[None, :]] = nl.load(x[r * 128 + nl.arange(128)[:, None],
                                                                                  nl.arange(cols)[None, :]])
            again = nl.load(x[r * 128 + nl.arange(128)[:, None], nl.arange(cols)[None, :]])
            for c in nl.affine_range(cols // 128):
                block = tiles[r, nl.arange(128)[:, None], c * 128 + nl.arange(128)[None, :]]
                t1 = nisa.nc_matmul(block, eye, is_transpose=True, is_moving_onezero=True)
                t2 = nisa.nc_matmul(block, eye, is_transpose=True, is_moving_onezero=True)
                s = nl.add(nl.copy(t1), nl.copy(t2))
                nl.store(out[r * 128 + nl.arange(128)[:, None], c * 128 + nl.arange(128)[None, :]], value=s)
            nl.store(out[r * 128 + nl.arange(128)[:, None], nl.arange(cols)[None, :]], value=nl.add(again, 0.0),
                     mask=(r * 128 + nl.arange(128)[:, None] < 0))
        return out
    '''


def parse(text):
    lines = text.splitlines()
    records = []
    for line in lines[1:]:
        kind, *tokens = line.split(' ')
        fields = dict(token.split('=', 1) for token in tokens)
        records.append((kind, fields))
    return lines[0], records


def ids(fields, key):
    return [int(v) for v in fields[key].split(',')] if key in fields else []


class TraceTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.path = self.ws.kernel(PIPELINE_KERNEL)
        rng = np.random.default_rng(3)
        self.x = rng.standard_normal((256, 256)).astype(np.float32)
        self.ident = np.identity(128, dtype=np.float32)

    def tearDown(self):
        self.ws.close()

    def test_numerics_and_trace(self):
        out, recorder = self.ws.run(self.path, self.x, self.ident)
        for r in range(2):
            for c in range(2):
                block = self.x[r * 128:(r + 1) * 128, c * 128:(c + 1) * 128]
                np.testing.assert_array_equal(out[r * 128:(r + 1) * 128, c * 128:(c + 1) * 128], 2 * block.T)
        self.check_well_formed(recorder.text())

    def check_well_formed(self, text):
        header, records = parse(text)
        self.assertEqual(header, 'accelopt-trace 1')
        self.assertEqual(records[0][0], 'M')
        instructions = [f for kind, f in records if kind == 'I']
        self.assertEqual(int(records[0][1]['instructions']), len(instructions))
        live, freed = set(), set()
        next_id = 0
        for kind, fields in records[1:]:
            if kind == 'A':
                alloc = int(fields['id'])
                self.assertNotIn(alloc, live | freed)
                self.assertIn(fields['buf'], ('sbuf', 'psum'))
                live.add(alloc)
            elif kind == 'F':
                alloc = int(fields['id'])
                self.assertIn(alloc, live)
                live.discard(alloc)
                freed.add(alloc)
            else:
                self.assertEqual(kind, 'I')
                self.assertEqual(int(fields['id']), next_id)
                self.assertTrue(all(d < next_id for d in ids(fields, 'dep')))
                for alloc in ids(fields, 'ra') + ids(fields, 'wa'):
                    self.assertIn(alloc, live, f'instruction {next_id} uses allocation {alloc} outside its live range')
                for required in ('op', 'eng', 'p', 'n', 'out', 'line'):
                    self.assertIn(required, fields)
                self.assertTrue(1 <= int(fields['p']) <= 128)
                if fields['eng'] == 'dma':
                    for required in ('dir', 'bytes', 'run', 'hbm'):
                        self.assertIn(required, fields)
                next_id += 1
        self.assertFalse(live, 'allocations without an F record')

    def test_timing_only_trace_equals_numerics_trace(self):
        _, numerics = self.ws.run(self.path, self.x, self.ident)
        _, timing = self.ws.run(self.path, self.x, self.ident, timing_only=True)
        numeric_lines = numerics.text().splitlines()
        timing_lines = timing.text().splitlines()
        self.assertIn('timing_only=1', timing_lines[1])
        self.assertEqual(numeric_lines[2:], timing_lines[2:])

    def test_a_store_counts_the_bytes_it_writes_in_the_destinations_format(self):
        # a bfloat16 tile stored into float32 HBM writes 4 bytes per element, whatever the tile's size
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
                nl.store(out, value=nl.copy(nl.load(x), dtype=nl.bfloat16))
                return out
            ''')
        _, recorder = self.ws.run(path, np.ones((128, 512), np.float32), timing_only=True)
        _, records = parse(recorder.text())
        dmas = {f['dir']: int(f['bytes']) for kind, f in records if kind == 'I' and 'dir' in f}
        self.assertEqual(dmas, {'load': 128 * 512 * 4, 'store': 128 * 512 * 4})

    def test_repeated_loads_and_transposes_are_marked_cse(self):
        _, recorder = self.ws.run(self.path, self.x, self.ident, timing_only=True)
        _, records = parse(recorder.text())
        instructions = [f for kind, f in records if kind == 'I']
        loads = [f for f in instructions if f['op'] == 'load']
        transposes = [f for f in instructions if f['op'] == 'transpose']
        self.assertEqual([f.get('cse') for f in loads], [None, None, '1', None, '1'])
        self.assertEqual([f.get('cse') for f in transposes], [None, '1'] * 4)

    def test_transposes_of_the_same_loaded_data_are_cse_in_any_buffer(self):
        # bmm/swiglu form: a load invariant in an outer loop lands in that iteration's own block; its transpose
        # repeats the first one (the compiler's CSE: the measured transpose counters), unless the source changed
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x, ident):
                out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
                eye = nl.load(ident)
                tiles = nl.ndarray((3, nl.par_dim(128), 128), dtype=np.float32, buffer=nl.sbuf)
                acc = nl.zeros((128, 128), dtype=np.float32, buffer=nl.sbuf)
                for i in nl.sequential_range(3):
                    if i == 2:
                        nl.store(x, value=nl.add(eye, 1.0))        # the source changes before the last load
                    tiles[i, nl.arange(128)[:, None], nl.arange(128)[None, :]] = nl.load(x)
                    t = nisa.nc_matmul(tiles[i, nl.arange(128)[:, None], nl.arange(128)[None, :]], eye,
                                       is_transpose=True, is_moving_onezero=True)
                    acc[...] = nl.add(acc, nl.copy(t))
                nl.store(out, value=acc)
                return out
            ''')
        _, recorder = self.ws.run(kernel, np.ones((128, 128), np.float32), np.eye(128, dtype=np.float32),
                                  timing_only=True)
        _, records = parse(recorder.text())
        transposes = [f for kind, f in records if kind == 'I' and f['op'] == 'transpose']
        self.assertEqual([f.get('cse') for f in transposes], [None, '1', None])

    def test_a_transpose_of_data_a_load_did_not_write_is_not_named_by_that_load(self):
        # each tile's data sits beside a load of one fixed region in the same buffer; the transposed half was not
        # written by that load, so it is not the same value (before, every transpose after the first was cse=1)
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 384), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(3):
                    t = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.sbuf)
                    t[:, 128:256] = nl.load(x[:, i * 128:(i + 1) * 128])
                    t[:, 0:128] = nl.load(x[:, 0:128])
                    nl.store(out[:, i * 128:(i + 1) * 128], value=nl.copy(nisa.nc_transpose(t[:, 128:256])))
                return out
            ''')
        x = np.arange(128 * 384, dtype=np.float32).reshape(128, 384)
        out, _ = self.ws.run(kernel, x)
        np.testing.assert_array_equal(np.asarray(out), np.concatenate([x[:, k * 128:(k + 1) * 128].T
                                                                       for k in range(3)], axis=1))
        _, recorder = self.ws.run(kernel, x, timing_only=True)
        _, records = parse(recorder.text())
        transposes = [f for kind, f in records if kind == 'I' and f['op'] == 'transpose']
        self.assertEqual([f.get('cse') for f in transposes], [None, None, None])

    def test_loads_of_one_region_under_different_elementwise_masks_are_not_repeats(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:128]
                a = nl.load(x[i_p, i_f], mask=(i_f - i_p >= 0))
                b = nl.load(x[i_p, i_f], mask=(i_p - i_f >= 1))
                c = nl.load(x[i_p, i_f], mask=(i_p - i_f >= 1))
                nl.store(out, value=nl.where(i_f - i_p >= 0, a, nl.add(b, c)))
                return out
            ''')
        _, recorder = self.ws.run(kernel, np.ones((128, 128), np.float32), timing_only=True)
        _, records = parse(recorder.text())
        loads = [f for kind, f in records if kind == 'I' and f['op'] == 'load']
        self.assertEqual([f.get('cse') for f in loads], [None, None, '1'])

    def test_engine_accesses_with_a_wide_inner_stride_are_traced(self):
        # the NKI performance guide: an inner stride above 16 B halves the engine's bandwidth (trace `stride`);
        # before, the front end never wrote it, so a free-axis transpose on ScalarE cost a contiguous copy
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 4096), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x).reshape((128, 64, 64))
                i_p, i_a = nl.arange(128)[:, None, None], nl.arange(64)[None, :, None]
                i_b = nl.arange(64)[None, None, :]
                r = nl.ndarray((128, 64, 64), dtype=x.dtype, buffer=nl.sbuf)
                r[i_p, i_a, i_b] = nisa.tensor_copy(t[i_p, i_b, i_a])            # inner step 64 fp32
                r2 = nisa.tensor_copy(t[i_p, i_a, nl.arange(32)[None, None, :] * 2])   # inner step 2 fp32: 8 B
                col = nisa.tensor_copy(t[i_p, i_a, 0])                             # inner axis one element: step 256 B
                s = nl.add(r2, col.reshape((128, 64, 1)).broadcast_to((128, 64, 32)))    # stride-0 operand: no step
                nl.store(out, value=nl.add(r.reshape((128, 4096)), 0.0))
                nl.store(out[:, 0:2048], value=s.reshape((128, 2048)))
                return out
            ''')
        _, recorder = self.ws.run(kernel, np.ones((128, 4096), np.float32), timing_only=True)
        _, records = parse(recorder.text())
        engine_ops = [f for kind, f in records if kind == 'I' and f['eng'] != 'dma']
        self.assertEqual([(f['op'], f.get('stride')) for f in engine_ops],
                         [('copy', '256'), ('copy', None), ('copy', '256'), ('tensor_tensor', None),
                          ('tensor_scalar', None)])

    def test_a_dma_transpose_on_trn1_moves_one_element_per_descriptor(self):
        # as nl.load_transpose2d: trn1 has no DMA transpose engine (before, nisa.dma_transpose was traced with the
        # destination's 512 B rows as its runs and cost a contiguous load); trn2's DMA transposes stay unmodelled
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out[:, 0:128], value=nisa.dma_transpose(x[0:128, :]))
                nl.store(out[:, 128:256], value=nl.load_transpose2d(x[128:256, :]))
                return out
            ''')
        x = np.arange(256 * 128, dtype=np.float32).reshape(256, 128)
        runs = {}
        for name in ('trn1', 'trn2'):
            target.set_target(name)
            try:
                out, _ = self.ws.run(kernel, x)
                _, recorder = self.ws.run(kernel, x, timing_only=True)
            finally:
                target.set_target(target.DEFAULT)
            np.testing.assert_array_equal(np.asarray(out), x.T)
            _, records = parse(recorder.text())
            runs[name] = [f['run'] for kind, f in records if kind == 'I' and f['op'] == 'load']
        self.assertEqual(runs, {'trn1': ['4', '4'], 'trn2': ['512', '4']})

    def test_blocks_of_a_tensor_name_their_tensor(self):
        _, recorder = self.ws.run(self.path, self.x, self.ident, timing_only=True)
        _, records = parse(recorder.text())
        allocs = [f for kind, f in records if kind == 'A']
        blocked = [f for f in allocs if 'tensor' in f]
        # `tiles` has one block dimension of 2: both blocks name the first block's allocation id
        self.assertEqual([(f['tensor'], f['blk']) for f in blocked], [(blocked[0]['id'], '0'), (blocked[0]['id'], '1')])
        self.assertTrue(all('blk' not in f for f in allocs if 'tensor' not in f))

    def test_compute_dtype_is_traced_for_16_bit_operands(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(a, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                lhs = nl.load(a)
                rhs = nl.load(b)
                product = nl.matmul(lhs, rhs, transpose_x=True)
                nl.store(out, value=nl.copy(product, dtype=nl.float32))
                return out
            ''')
        for dtype, expected in ((np.float32, None), (np.float16, '2')):
            _, recorder = self.ws.run(kernel, np.ones((128, 128), dtype), np.ones((128, 512), dtype), timing_only=True)
            _, records = parse(recorder.text())
            matmul, = [f for kind, f in records if kind == 'I' and f['op'] == 'matmul']
            self.assertEqual(matmul.get('dt'), expected)

    def test_loop_invariant_tensor_tensor_is_marked_cse(self):
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(2):
                    t = nl.load(x[i * 128:(i + 1) * 128, :])
                    for j in nl.affine_range(3):
                        acc += nisa.tensor_tensor(t, t, op=nl.multiply)   # invariant in j: computed once per i
                nl.store(out, value=acc)
                return out
            ''')
        _, recorder = self.ws.run(kernel, np.ones((256, 64), np.float32), timing_only=True)
        _, records = parse(recorder.text())
        products = [f for kind, f in records if kind == 'I' and f['op'] == 'tensor_tensor' and 'cse' in f]
        self.assertEqual(len(products), 2 * 2)

    TWO_PASSES = '''
        @nki.jit
        def kernel(x):
            out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            for p in nl.static_range(2):          # unrolled: both passes share one reuse scope
                for i in range(x.shape[1] // 512):
                    acc += nl.load(x[:, i * 512:(i + 1) * 512])
            nl.store(out, value=acc)
            return out
        '''

    def second_pass_loads(self, tiles):
        """The cse fields of the second pass's loads of a kernel reading `tiles` [128, 512] float32 tiles (2 KiB
        per partition each) twice."""
        kernel = self.ws.kernel(self.TWO_PASSES)
        _, recorder = self.ws.run(kernel, np.ones((128, 512 * tiles), np.float32), timing_only=True)
        _, records = parse(recorder.text())
        loads = [f for kind, f in records if kind == 'I' and f['op'] == 'load']
        self.assertEqual(len(loads), 2 * tiles)
        self.assertTrue(all(f['bytes'] == str(128 * 2048) for f in loads))
        self.assertTrue(all('cse' not in f for f in loads[:tiles]))
        return [f.get('cse') for f in loads[tiles:]]

    def test_a_reload_after_little_other_data_is_reused(self):
        # 16 tiles, 32 KiB per partition between a tile's two loads: it can still be in SBUF
        self.assertEqual(self.second_pass_loads(16), ['1'] * 16)

    def test_a_reload_after_more_than_sbuf_of_other_loads_is_a_dma(self):
        # 128 tiles, 256 KiB per partition between a tile's two loads (trn1 SBUF: 192 KiB per partition): the
        # first tile cannot still be on chip, every load of the second pass is a DMA again
        self.assertEqual(self.second_pass_loads(128), [None] * 128)

    def test_the_reuse_bound_is_the_targets_sbuf_partition(self):
        # 112 tiles: 224 KiB per partition from a tile's first load to its reuse, the tile included; more than
        # trn1's 192 KiB, exactly trn2's 224 KiB
        self.assertEqual(self.second_pass_loads(112), [None] * 112)
        target.set_target('trn2')
        try:
            self.assertEqual(self.second_pass_loads(112), ['1'] * 112)
            self.assertEqual(self.second_pass_loads(113), [None] * 113)
        finally:
            target.set_target(target.DEFAULT)

    def test_a_reload_is_measured_from_the_tiles_last_use(self):
        # a load invariant in its loop (hoisted by the compiler) stays reused however much else streams past it,
        # as long as little comes in between two uses: 512 KiB per partition of x, 2 KiB between uses of w
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x, w):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in range(x.shape[1] // 512):
                    acc += nl.multiply(nl.load(x[:, i * 512:(i + 1) * 512]), nl.load(w))
                nl.store(out, value=acc)
                return out
            ''')
        _, recorder = self.ws.run(kernel, np.ones((128, 512 * 256), np.float32), np.ones((128, 512), np.float32),
                                  timing_only=True)
        _, records = parse(recorder.text())
        loads = [f for kind, f in records if kind == 'I' and f['op'] == 'load']
        self.assertEqual([f.get('cse') for f in loads[1::2]], [None] + ['1'] * 255)
        self.assertTrue(all('cse' not in f for f in loads[0::2]))

    def test_a_computation_repeated_after_more_than_sbuf_of_loads_runs_again(self):
        # a CSE'd result has to be kept on chip like a loaded tile: repeated after 256 KiB per partition of loads
        # it is computed again; repeated right away it is reused
        kernel = self.ws.kernel('''
            @nki.jit
            def kernel(x, w):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                t = nl.load(w)
                for p in nl.static_range(2):
                    acc += nisa.tensor_tensor(t, t, op=nl.multiply)
                    acc += nisa.tensor_tensor(t, t, op=nl.multiply)
                    for i in range(x.shape[1] // 512):
                        acc += nl.load(x[:, i * 512:(i + 1) * 512])
                nl.store(out, value=acc)
                return out
            ''')
        _, recorder = self.ws.run(kernel, np.ones((128, 512 * 128), np.float32), np.ones((128, 512), np.float32),
                                  timing_only=True)
        _, records = parse(recorder.text())
        adds = [f for kind, f in records if kind == 'I' and f['op'] == 'tensor_tensor']
        product_lines = sorted({int(f['line']) for f in adds})[:2]
        products = [f for f in adds if int(f['line']) in product_lines][0::2]    # each line: product, then +=
        self.assertEqual([f.get('cse') for f in products], [None, '1', None, '1'])

    def test_dependencies_and_dma_fields(self):
        _, recorder = self.ws.run(self.path, self.x, self.ident, timing_only=True)
        _, records = parse(recorder.text())
        instructions = [f for kind, f in records if kind == 'I']
        first_transpose = next(f for f in instructions if f['op'] == 'transpose')
        producer = instructions[ids(first_transpose, 'dep')[-1]]
        self.assertEqual(producer['op'], 'load')
        self.assertEqual(producer['bytes'], str(128 * 256 * 4))
        self.assertEqual(producer['run'], str(256 * 4))
        masked_store = [f for f in instructions if f['op'] == 'store'][-1]
        self.assertEqual(masked_store['bytes'], '0')
        self.assertEqual(first_transpose['p'], '128')
        self.assertEqual(first_transpose['nstat'], '128')

    def test_vector_instructions_name_their_alu_operators(self):
        # (the timing model's Vector Engine rate depends on them: a bf16 divide or scalar_tensor_tensor was timed at
        # the one-element-per-cycle rate the pages give only to add, subtract and multiply)
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                t = nl.load(x[0:128, 0:64])
                a = nisa.tensor_tensor(t, t, op=nl.divide)
                b = nl.multiply(t, a)
                c = nisa.scalar_tensor_tensor(data=t, op0=nl.subtract, operand0=1.0, op1=nl.multiply, operand1=b)
                d = nisa.tensor_scalar(c, op0=nl.add, operand0=1.0)
                return x
            ''')
        _, recorder = self.ws.run(path, np.zeros((128, 64), np.float32), timing_only=True)
        _, records = parse(recorder.text())
        self.assertEqual([(f['op'], f.get('alu')) for kind, f in records if kind == 'I'],
                         [('load', None), ('tensor_tensor', 'divide'), ('tensor_tensor', 'multiply'),
                          ('tensor_tensor', 'subtract,multiply'), ('tensor_scalar', None)])

    def test_a_reduction_names_its_operator_and_the_size_of_the_elements_it_reads(self):
        # (the Vector Engine reduces 16-bit data by add or max at two elements per cycle: the rate is that of the
        # input, whatever format the one value per partition is written in)
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                t = nl.load(x[0:128, 0:64])
                h = nl.copy(t, dtype=nl.bfloat16)
                a = nisa.tensor_reduce(nl.max, h, axis=1, dtype=nl.float32)
                b = nisa.tensor_reduce(nl.add, t, axis=1)
                c = nisa.tensor_reduce(nl.multiply, h, axis=1, dtype=nl.bfloat16)
                u = nl.copy(t, dtype=nl.uint8)
                d = nisa.tensor_reduce(nl.add, u, axis=1, dtype=nl.float32)
                return x
            ''')
        _, recorder = self.ws.run(path, np.zeros((128, 64), np.float32), timing_only=True)
        _, records = parse(recorder.text())
        # (dt=2 is the bfloat16 rate only: 1-byte integers are cast to float32 and read at N)
        self.assertEqual([(f.get('alu'), f.get('dt')) for kind, f in records if kind == 'I' and
                          f['op'] == 'tensor_reduce'],
                         [('maximum', '2'), ('add', None), ('multiply', '2'), ('add', None)])

    def test_a_dma_over_more_than_128_rows_of_hbm_spans_its_on_chip_partitions(self):
        # (trace p is 1..128; a DMA's HBM side can have any number of rows)
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x, y):
                copied = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=copied, src=x)
                row = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.shared_hbm)
                t = nl.load(y)
                nisa.dma_copy(dst=row[0, :], src=t[0, :])
                return copied, row
            ''')
        x = np.arange(300 * 64, dtype=np.float32).reshape(300, 64)
        y = np.arange(256, dtype=np.float32).reshape(1, 256)
        (copied, row), recorder = self.ws.run(path, x, y)
        np.testing.assert_array_equal(copied, x)
        np.testing.assert_array_equal(row, y)
        _, records = parse(recorder.text())
        copies = [f for kind, f in records if kind == 'I' and f['op'] == 'dma_copy']
        self.assertEqual([(f['p'], f['bytes']) for f in copies], [('128', str(300 * 64 * 4)), ('1', str(256 * 4))])

    def test_a_dynamic_read_depends_on_writes_anywhere_in_its_tensor(self):
        # The rows a .ap(scalar_offset=) read reaches are data: its region is the whole tensor, although a plain read
        # of the same access pattern (recorded first, and memoised by geometry) covers only the first rows.
        path = self.ws.kernel('''
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def kernel(table, start):
                rows, width = table.shape
                out = nl.ndarray((8, width), dtype=table.dtype, buffer=nl.shared_hbm)
                staged = nl.ndarray((rows, width), dtype=table.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=staged, src=table)
                head = nl.ndarray((8, width), dtype=table.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=head, src=staged.ap(pattern=[[width, 8], [1, width]], offset=0))
                doubled = nl.ndarray((8, width), dtype=table.dtype, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=doubled, data=head, op0=nl.multiply, operand0=2.0)
                nisa.dma_copy(dst=staged.ap(pattern=[[width, 8], [1, width]], offset=8 * width), src=doubled)
                at = nl.ndarray((1, 1), dtype=start.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=at, src=start)
                picked = nl.ndarray((8, width), dtype=table.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=picked, src=staged.ap(pattern=[[width, 8], [1, width]], offset=0, scalar_offset=at,
                                                       indirect_dim=0))
                nisa.dma_copy(dst=out, src=picked)
                return out
            ''', header='')
        table = np.arange(32 * 8, dtype=np.float32).reshape(32, 8)
        out, recorder = self.ws.run(path, table, np.array([[8]], dtype=np.int32))
        np.testing.assert_array_equal(out, 2 * table[:8])
        _, records = parse(recorder.text())
        copies = [f for kind, f in records if kind == 'I' and f['op'] == 'dma_copy']
        doubled_rows, dynamic_read = copies[2], copies[4]
        self.assertEqual((doubled_rows['dir'], dynamic_read['dir']), ('store', 'load'))
        self.assertIn(int(doubled_rows['id']), ids(dynamic_read, 'dep'))


class LatticeOverlapTest(unittest.TestCase):
    def test_it_agrees_with_listing_the_elements(self):
        # two accesses of one shape and strides, offsets `delta` apart: common element or not, against brute force
        # (negative and zero strides, strides that interleave, single-element dimensions)
        rng = random.Random(11)
        for _ in range(3000):
            shape = [rng.randint(1, 5) for _ in range(rng.randint(1, 4))]
            strides = [rng.choice([0, 1, 2, 3, 5, 7, 8, 16, 20, -3]) * rng.choice([1, 4]) for _ in shape]
            delta = rng.randint(-150, 150)
            elements = {sum(i * s for i, s in zip(index, strides))
                        for index in itertools.product(*(range(n) for n in shape))}
            expected = any(e + delta in elements for e in elements)
            with self.subTest(shape=shape, strides=strides, delta=delta):
                self.assertEqual(lattice_overlap(delta, shape, strides), expected)

    def test_loop_indexed_slices_of_a_large_view_are_decided_without_listing_elements(self):
        # rows j of a [128, 224, 1024] view (strides 229376, 1024, 1): disjoint for j != j', the same for j == j'
        shape, strides = (128, 1, 1024), (229376, 1024, 1)
        self.assertFalse(lattice_overlap(5 * 1024, shape, strides))
        self.assertTrue(lattice_overlap(0, shape, strides))
        self.assertTrue(lattice_overlap(229376 - 3, shape, strides))      # next partition row, 3 elements back


if __name__ == '__main__':
    unittest.main()
