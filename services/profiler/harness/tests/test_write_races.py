"""Write races between the programs of an SPMD launch (nki_sim/races.py), through both protocol steps: two programs
storing different values into one output element is INCORRECT whatever the simulator's program order makes of it;
the same values, disjoint parts, and the launching code's own writes after the launch are not races."""
import os
import unittest

from tests.support import Workspace

SILU = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), '..', '..', '..', 'examples',
                    'silu', 'reference_small.py')

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

if __name__ == '__main__':
    unittest.main()
