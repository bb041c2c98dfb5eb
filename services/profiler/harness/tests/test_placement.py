"""Direct allocation (nki_sim/placement.py): a read of bytes that another tensor placed at the same address wrote
over is INCORRECT (on the device it sees the other tensor's data); reusing an address once a tensor is done passes."""
import unittest

from tests.support import Workspace, line_of

HEADER = '''import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.compiler as ncc
'''

# a + b over two [128, 64] tiles, with the kernel's own placement of a, b and the sum (BASE_B, BASE_R: bytes)
ADD = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        a_tile = nl.ndarray((1, nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
        b_tile = nl.ndarray((1, nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=BASE_B))
        r_tile = nl.ndarray((1, nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=BASE_R))
        a_tile[0] = nl.load(a)
        b_tile[0] = nl.load(b)
        r_tile[0] = nisa.tensor_tensor(a_tile[0], b_tile[0], op=nl.add)  # the add
        nl.store(out, value=r_tile[0])
        return out
    '''
# a * 2 then b * 3, each through a tile at byte 0: the second reuses the first's bytes once it is stored
REUSE = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((2, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        first = nl.ndarray((nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
        second = nl.ndarray((nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
        first[...] = nl.load(a)
        nl.store(out[0], value=nl.multiply(first, 2.0))
        second[...] = nl.load(b)
        nl.store(out[1], value=nl.multiply(second, 3.0))
        return out
    '''
# four blocks in two physical slots (num_free_tiles=(2,)): blocks 0 and 2 share bytes
MODULO = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((4, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((4, nl.par_dim(128), 64), dtype=a.dtype,
                       buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
        for i in nl.sequential_range(4):
            t[i] = nl.load(a if i % 2 == 0 else b)
            LATE_READnl.store(out[i], value=t[i])
        return out
    '''
# two PSUM accumulations in the same bank
PSUM = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        ident = nl.shared_identity_matrix(n=128, dtype=a.dtype)
        pa = nl.ndarray((1, nl.par_dim(128), 64), dtype=nl.float32, buffer=ncc.psum.alloc(ALLOC))
        pb = nl.ndarray((1, nl.par_dim(128), 64), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=BANK))
        pa[0] = nisa.nc_matmul(ident, nl.load(a))
        pb[0] = nisa.nc_matmul(ident, nl.load(b))
        nl.store(out, value=nl.add(nl.copy(pa[0]), nl.copy(pb[0])))  # the sum
        return out
    '''
ZEROS = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        acc = nl.zeros((nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
        other = nl.ndarray((nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=OTHER))
        other[...] = nl.load(b)
        acc[...] = nl.add(acc, nl.load(a))  # the accumulation
        nl.store(out, value=acc)
        return out
    '''
ADDRESS = '''
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        a_tile = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf, address=(0, 0))
        b_tile = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf, address=(0, OFFSET))
        a_tile[...] = nl.load(a)
        b_tile[...] = nl.load(b)
        nl.store(out, value=nl.add(a_tile, b_tile))  # the add
        return out
    '''


def reference(forward):
    return f'''
def get_inputs():
    return [np.random.normal(size=(128, 64)).astype(np.float32), np.random.normal(size=(128, 64)).astype(np.float32)]


def forward(a, b):
    {forward}


def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    return [np.reshape(k_res, ref.shape)]
'''


SUM = reference('return a + b')


class PlacementTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def check(self, kernel_text, reference_text, verdict, timing_only_too=True):
        kernel = self.ws.kernel(kernel_text, header=HEADER)
        reference = self.ws.reference(reference_text)
        results = []
        for timing_only in ((True, False) if timing_only_too else (False,)):
            with self.subTest(timing_only=timing_only):
                result = self.ws.evaluate(reference, kernel, timing_only=timing_only)
                self.assertEqual(result['verdict'], verdict, result['message'])
                results.append(result)
        return kernel, results

    def test_a_read_after_another_tensor_wrote_over_the_same_bytes_is_incorrect(self):
        kernel, results = self.check(ADD.replace('BASE_B', '0').replace('BASE_R', '256'), SUM, 'INCORRECT')
        for result in results:
            self.assertEqual(result['line'], line_of(kernel, '# the add'))
            self.assertIn('wrote over its bytes at line', result['message'])
            self.assertIn(f'declared at line {line_of(kernel, "a_tile = nl.ndarray")}', result['message'])
            self.assertIn(f'declared at line {line_of(kernel, "b_tile = nl.ndarray")}', result['message'])
            self.assertIn('SBUF partitions 0-127, bytes 0-255', result['message'])

    def test_disjoint_placements_verify(self):
        self.check(ADD.replace('BASE_B', '256').replace('BASE_R', '512'), SUM, 'OK')

    def test_a_partial_overlap_counts_its_shared_bytes(self):
        kernel, results = self.check(ADD.replace('BASE_B', '128').replace('BASE_R', '512'), SUM, 'INCORRECT')
        self.assertIn('bytes 128-255', results[0]['message'])

    def test_reusing_an_address_once_the_first_tensor_is_done_verifies(self):
        self.check(REUSE, reference('return np.stack([a * 2, b * 3])'), 'OK')

    def test_blocks_of_one_tensor_in_the_same_slot_alias(self):
        in_order = MODULO.replace('LATE_READ', '')
        self.check(in_order, reference('return np.stack([a, b, a, b])'), 'OK')
        # blocks 0 and 2 share slot 0: reading block 0 after block 2 was written reads block 2's data
        late = MODULO.replace('LATE_READ', 'nl.store(out[0], value=t[0]) if i == 2 else None\n            ')
        kernel, results = self.check(late, reference('return np.stack([a, b, a, b])'), 'INCORRECT')
        self.assertIn('(block [0]) is read here', results[0]['message'])
        self.assertIn('(block [2]) wrote over its bytes', results[0]['message'])

    def test_an_initialized_tensor_is_written_at_its_declaration(self):
        self.check(ZEROS.replace('OTHER', '256'), reference('return a'), 'OK')
        kernel, results = self.check(ZEROS.replace('OTHER', '0'), reference('return a'), 'INCORRECT')
        self.assertEqual(results[0]['line'], line_of(kernel, '# the accumulation'))

    def test_psum_banks_by_mod_alloc_and_by_an_allocation_function(self):
        # the allocation function is called by keyword, as the API page names its arguments
        by_keyword = 'lambda idx, pdim_size, fdim_size: (0, 0, 0)'
        same_bank = PSUM.replace('ALLOC', by_keyword).replace('BANK', '0')
        kernel, results = self.check(same_bank, SUM, 'INCORRECT')
        self.assertIn('PSUM partitions 0-127, bytes 0-255', results[0]['message'])
        other_bank = PSUM.replace('ALLOC', by_keyword).replace('BANK', '1')
        self.check(other_bank, SUM, 'OK')

    def test_fixed_addresses_alias_in_both_protocol_steps(self):
        self.check(ADDRESS.replace('OFFSET', '256'), SUM, 'OK')
        kernel, results = self.check(ADDRESS.replace('OFFSET', '0'), SUM, 'INCORRECT')
        self.assertEqual(results[0]['line'], line_of(kernel, '# the add'))


if __name__ == '__main__':
    unittest.main()
