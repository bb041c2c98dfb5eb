"""Step B tells step A the inputs' shapes (protocol/input_specs.py): what is sent, what falls back to step A building
the inputs itself, and that step B never waits for step A."""
import os
import unittest

import numpy as np

from nki_sim.dtypes import LOW_PRECISION
from nki_sim.jit import InputSpec
from protocol import input_specs
from tests.support import STANDARD_TRANSFORMS, Workspace

# Builds its inputs only in step B: step A (run_kernel.py) gets their shapes sent.
INPUTS_ONLY_IN_STEP_B = '''
import sys


def get_inputs():
    if sys.argv[0].endswith('run_kernel.py'):
        raise RuntimeError('step A built the inputs')
    return [np.random.normal(size=(128, 64)).astype(np.float32), 3, (2, [1.5, None], 'x')]


def forward(x, scale, _):
    return x * scale
''' + STANDARD_TRANSFORMS
SCALING_KERNEL = '''
    @nki.jit
    def kernel(x, scale, options):
        assert options == (2, [1.5, None], 'x'), options
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.multiply(nl.load(x), float(scale)))
        return out
    '''


def sent(line):
    """What step A receives of `line`."""
    read_end, write_end = os.pipe()
    input_specs.send(write_end, line)
    return input_specs.receive(read_end)


class InputSpecsTest(unittest.TestCase):
    def test_arrays_become_shapes_in_their_formats_and_values_stay_as_they_are(self):
        arrays = [np.zeros((4, 8), np.float32), np.zeros((2, 3, 5), np.int32)]
        values = [arrays[0], 7, 2.5, True, None, 'name', (1, [2, (3,)]), arrays[1]]
        received = sent(input_specs.encode(values, arrays, [LOW_PRECISION['bfloat16'], None]))
        self.assertEqual(len(received), len(values))
        self.assertIsInstance(received[0], InputSpec)
        self.assertEqual((received[0].shape, received[0].dtype), ((4, 8), LOW_PRECISION['bfloat16']))
        self.assertEqual((received[7].shape, received[7].dtype), ((2, 3, 5), np.dtype(np.int32)))
        self.assertEqual(received[1:7], [7, 2.5, True, None, 'name', (1, [2, (3,)])])
        self.assertIs(type(received[1]), int)
        self.assertIs(type(received[3]), bool)
        self.assertIs(type(received[6]), tuple)
        self.assertIs(type(received[6][1]), list)

    def test_arrays_inside_a_list_argument_are_sent_as_shapes_depth_first(self):
        # a List[nl.ndarray] argument (the NKI Library's layer weights); Problem.kernel_arrays lists them depth first
        arrays = [np.zeros((4, 8), np.float32), np.zeros((2, 2), np.int32), np.zeros((3,), np.float32)]
        values = [arrays[0], [(arrays[1], 5), [arrays[2]]]]
        received = sent(input_specs.encode(values, arrays, [None, None, LOW_PRECISION['bfloat16']]))
        self.assertIsInstance(received[0], InputSpec)
        pair, inner = received[1]
        self.assertIs(type(received[1]), list)
        self.assertEqual((pair[0].shape, pair[0].dtype, pair[1]), ((2, 2), np.dtype(np.int32), 5))
        self.assertEqual((inner[0].shape, inner[0].dtype), ((3,), LOW_PRECISION['bfloat16']))

    def test_values_it_cannot_send_make_step_a_build_the_inputs(self):
        array = np.zeros((2, 2), np.float32)
        for value in (np.int64(3), {'tiles': 2}, np.float32(1.0), object()):
            with self.subTest(value=type(value).__name__):
                self.assertEqual(input_specs.encode([array, value], [array], [None]), input_specs.BUILD_THEMSELVES)
                self.assertIsNone(sent(input_specs.encode([array, value], [array], [None])))
        record = np.zeros(2, dtype=[('a', np.float32)])
        text = np.zeros(2, dtype='<U3')
        for array in (record, text):
            with self.subTest(dtype=str(array.dtype)):
                self.assertEqual(input_specs.encode([array], [array], [None]), input_specs.BUILD_THEMSELVES)

    def test_a_line_longer_than_one_atomic_pipe_write_is_not_sent(self):
        arrays = [np.zeros((1,), np.float32)] * 1000
        self.assertGreater(len(input_specs.encode(arrays, arrays, [None] * 1000)), input_specs.MAX_LINE_BYTES)
        self.assertIsNone(sent(input_specs.encode(arrays, arrays, [None] * 1000)))

    def test_step_b_never_waits_for_a_reader_that_does_not_read(self):
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        try:
            while True:
                os.write(write_end, b'x' * 65536)
        except BlockingIOError:
            pass
        os.set_blocking(write_end, True)
        input_specs.send(write_end, '{"inputs":[]}\n')       # returns although the pipe is full
        with self.assertRaises(OSError):
            os.fstat(write_end)
        os.close(read_end)

    def test_no_line_or_a_broken_one_makes_step_a_build_the_inputs(self):
        for data in (b'', b'{"inputs":[{"array":[[2],', b'{"build":true}\n', b'{"inputs":[{"array":[[2],"bogus"]}]}\n',
                     b'{"inputs":[{"array":[["x"],"float32"]}]}\n', b'[1]\n'):
            with self.subTest(data=data):
                read_end, write_end = os.pipe()
                os.write(write_end, data)
                os.close(write_end)
                self.assertIsNone(input_specs.receive(read_end))

    def test_step_a_reads_one_line_while_the_pipe_stays_open(self):
        read_end, write_end = os.pipe()
        os.write(write_end, b'{"inputs":[{"value":4}]}\n')
        self.assertEqual(input_specs.receive(read_end), [4])      # no EOF needed
        os.close(write_end)


class ProtocolInputSpecsTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()

    def tearDown(self):
        self.ws.close()

    def test_step_a_runs_the_kernel_on_the_shapes_and_values_step_b_sends(self):
        reference = self.ws.reference(INPUTS_ONLY_IN_STEP_B)
        kernel = self.ws.kernel(SCALING_KERNEL)
        for timing_only in (False, True):
            with self.subTest(timing_only=timing_only):
                result = self.ws.evaluate(reference, kernel, timing_only=timing_only)
                self.assertEqual(result['verdict'], 'OK', result['message'])
                self.assertEqual(result['instructions'], 3)


if __name__ == '__main__':
    unittest.main()
