"""NeuronCore generations. A NeuronCore-v4 (trn3) instruction or operator is a COMPILE_ERROR on both simulated
targets, naming its API page's note (before, trn1 profiles accepted activate2's fused scale and bias, nl.abs_max and
nisa.exponential, whose exp on the Vector Engine beside ScalarE made a sum of exponentials 1.3x faster than either
device can run it). NeuronCore-v3 forms stay accepted under the trn1 target, as
docs/simulator.md ("Known limits") records: public trn2 kernels run under the default target."""
import unittest

from tests.support import SIMPLE_REFERENCE, Workspace, line_of

KERNEL = '''
    @nki.jit
    def kernel(x):
        t = nl.load(x[0:128, 0:64])
        lo = nl.zeros((128, 1), dtype=nl.float32)
        hi = nl.full((128, 1), 32.0, dtype=nl.float32)
        y = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        r = CALL  # <- here
        return x
    '''

NEURONCORE_V4 = (
    ('nl.abs_max(t, t)', 'nl.abs_max is available only on NeuronCore-v4 and newer'),
    ('nisa.tensor_tensor(t, t, op=nl.abs_min)', 'nl.abs_min is available only on NeuronCore-v4 and newer'),
    ('nisa.activate2(dst=y, op=nl.exp, data=t, imm0=1.0, imm1=0.5, op0=nl.multiply, op1=nl.add)',
     'nisa.activate2 is available only on NeuronCore-v4 and newer'),
    ('nisa.exponential(t, max_value=1.0)', 'nisa.exponential is available only on NeuronCore-v4 and newer'),
)

NEURONCORE_V3 = (
    'nisa.range_select(on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=lo, bound1=hi)',
    'nisa.nc_matmul(t[0:32, :], t[0:32, :], tile_position=(32, 0), tile_size=(32, 128))',
)


class GenerationTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.reference = self.ws.reference(SIMPLE_REFERENCE)

    def test_neuroncore_v4_forms_compile_on_neither_simulated_target(self):
        for call, message in NEURONCORE_V4:
            path = self.ws.kernel(KERNEL.replace('CALL', call))
            for target, version in (('trn1', 2), ('trn2', 3)):
                with self.subTest(call=call, target=target):
                    result = self.ws.evaluate(self.reference, path, timing_only=True, target=target)
                    self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
                    self.assertEqual(result['line'], line_of(path, '# <- here'))
                    self.assertIn(message, result['message'])
                    self.assertIn(f'the simulated NeuronCore is {target} (NeuronCore-v{version}): the simulator '
                                  'models trn1 and trn2 only', result['message'])

    def test_neuroncore_v3_forms_run_under_both_targets(self):
        for call in NEURONCORE_V3:
            path = self.ws.kernel(KERNEL.replace('CALL', call))
            for target in ('trn1', 'trn2'):
                with self.subTest(call=call, target=target):
                    result = self.ws.evaluate(self.reference, path, timing_only=True, target=target)
                    self.assertEqual(result['verdict'], 'OK', result['message'])


if __name__ == '__main__':
    unittest.main()
