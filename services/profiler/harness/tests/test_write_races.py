"""Write races between the programs of an SPMD launch (nki_sim/races.py), through both protocol steps: two programs
storing different values into one output element is INCORRECT whatever the simulator's program order makes of it;
the same values, disjoint parts, and the launching code's own writes after the launch are not races."""
import os
import unittest

from tests.support import STANDARD_TRANSFORMS, Workspace

SILU = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), '..', '..', '..', 'examples',
                    'silu', 'reference_small.py')

# silu of a single [128, 512] tile
SILU_128_TEXT = '''
def get_inputs():
    return [np.random.randn(128, 512).astype(np.float32)]


def forward(x):
    x64 = x.astype(np.float64)
    return (x64 / (1.0 + np.exp(-x64))).astype(np.float32)
'''

# Program p of `body` stores silu(x) * SCALE over rows [ROWS]; `kernel` launches it with LAUNCH and then runs AFTER.
KERNEL = '''
    @nki.jit
    def body(x, out):
        p = nl.program_id(0)
        M, N = x.shape
        half = M // 2
        for i in nl.affine_range(ROWS // 128):
            row = FIRST + i * 128
            t = nl.load(x[row:row + 128, :])
            nl.store(out[row:row + 128, :], value=nl.multiply(nl.multiply(t, nl.sigmoid(t)), SCALE))

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        body[LAUNCH](x, out)
        AFTER
        return out
'''


def kernel_text(launch, rows='M', first='0', scale='1.0', after=''):
    return (KERNEL.replace('LAUNCH', launch).replace('ROWS', rows).replace('FIRST', first)
            .replace('SCALE', scale).replace('AFTER', after or 'pass'))


class WriteRaceTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def evaluate(self, text):
        return self.ws.evaluate(SILU, self.ws.kernel(text), seeds=1)

    @property
    def silu_128(self):
        return self.ws.reference(SILU_128_TEXT + STANDARD_TRANSFORMS)

    def test_two_programs_storing_different_values_into_one_element_race(self):
        # program 0 stores zeros, program 1 the answer: sequential simulation makes program 1 win every time
        for launch in ('nl.nc(2)', '2'):
            with self.subTest(launch=launch):
                result = self.evaluate(kernel_text(launch, scale='p'))
                self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
                self.assertIn('a write race between the programs of the launch: program [1] overwrites',
                              result['message'])
                self.assertIn('that program [0] wrote with different values', result['message'])

    def test_programs_storing_the_same_values_or_disjoint_rows_do_not_race(self):
        for name, text in (('same values', kernel_text('nl.nc(2)')),
                           ('disjoint rows', kernel_text('nl.nc(2)', rows='half', first='p * half'))):
            with self.subTest(name):
                result = self.evaluate(text)
                self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_the_launching_code_overwrites_after_the_launch_in_order(self):
        # program 0 stores zeros into rows 0:128 and program 1 the answer into rows 128:256; the entry's store after
        # the launch, which comes after every program, writes the answer over rows 0:128
        after = '''t = nl.load(x[0:128, :])
        nl.store(out[0:128, :], value=nl.multiply(t, nl.sigmoid(t)))'''
        result = self.evaluate(kernel_text('nl.nc(2)', rows='half', first='p * half', scale='p', after=after))
        self.assertEqual(result['verdict'], 'OK', result['message'])
    def test_an_add_onto_another_programs_store_races_and_two_adds_do_not(self):
        # each program's half of silu(x) reaches every element: by two atomic adds (in either order the same), or
        # by program 0's store and program 1's add (store last, the add is lost)
        template = '''
    @nki.jit
    def body(x, out):
        p = nl.program_id(0)
        M, N = x.shape
        for i in nl.affine_range(M // 128):
            t = nl.load(x[i * 128:(i + 1) * 128, :])
            half = nl.multiply(nl.multiply(t, nl.sigmoid(t)), 0.5)
            FIRST_WRITE

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(x.shape[0] // 128):
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.zeros((128, x.shape[1]), dtype=x.dtype))
        body[nl.nc(2)](x, out)
        return out
'''
        add = 'nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=half, dst_rmw_op=nl.add)'
        store_then_add = ('if p == 0:\n                nl.store(out[i * 128:(i + 1) * 128, :], value=half)\n'
                          '            else:\n                ' + add)
        result = self.evaluate(template.replace('FIRST_WRITE', add))
        self.assertEqual(result['verdict'], 'OK', result['message'])
        result = self.evaluate(template.replace('FIRST_WRITE', store_then_add))
        self.assertEqual(result['verdict'], 'INCORRECT', result['message'])
        self.assertIn('a write race between the programs of the launch: program [1]', result['message'])

    def test_a_program_reading_what_another_wrote_races_unless_the_cores_meet_at_a_barrier(self):
        template = '''
    @nki.jit
    def body(x, tmp, out):
        p = nl.program_id(0)
        if p == 0:
            nl.store(tmp, value=nl.sigmoid(nl.load(x)))
        BARRIER
        if p == 1:
            t = nl.load(x)
            nl.store(out, value=nl.multiply(t, nl.load(tmp)))

    @nki.jit
    def kernel(x):
        tmp = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        body[nl.nc(2)](x, tmp, out)
        return out
'''
        racy = self.ws.evaluate(self.silu_128, self.ws.kernel(template.replace('BARRIER', 'pass')), seeds=1)
        self.assertEqual(racy['verdict'], 'INCORRECT', racy['message'])
        self.assertIn('program [1] reads 65536 element(s)', racy['message'])
        self.assertIn('that program [0] wrote', racy['message'])
        synchronized = self.ws.evaluate(self.silu_128, self.ws.kernel(template.replace(
            'BARRIER', 'nisa.core_barrier(nl.load(x[0:1, 0:1]), (0, 1))')), seeds=1)
        self.assertEqual(synchronized['verdict'], 'OK', synchronized['message'])


if __name__ == '__main__':
    unittest.main()
