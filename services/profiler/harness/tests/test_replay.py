"""Step B on forged programs: every malformed program ends in a clear non-OK verdict, never a crash."""
import json
import os
import subprocess
import sys
import textwrap
import unittest

import numpy as np

from nki_sim.jit import simulate
from nki_sim.program import FORMAT, AffineLine, CallLine, ProgramError, RecordedFailure, parse_program, read_program
from protocol.evaluation import evaluate
from protocol.problem import load_module, load_problem
from protocol.replay import replay_check
from tests.support import DOUBLING_KERNEL, SIMPLE_REFERENCE, STANDARD_TRANSFORMS, Workspace, line_of

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def recorded_doubling_program():
    """(workspace, reference path, the program lines step A records for DOUBLING_KERNEL)."""
    ws = Workspace()
    reference = ws.reference(SIMPLE_REFERENCE)
    program = os.path.join(ws.root, 'honest.jsonl')
    subprocess.run([sys.executable, os.path.join(HARNESS, 'run_kernel.py'), '--problem', reference,
                    '--kernel', ws.kernel(DOUBLING_KERNEL), '--program-out', program], check=True)
    with open(program) as f:
        return ws, reference, f.readlines()

class ForgedProgramTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws, cls.reference, lines = recorded_doubling_program()
        cls.entries = [json.loads(line) for line in lines]

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def check(self, entries=None, text=None):
        path = os.path.join(self.ws.root, 'forged.jsonl')
        with open(path, 'w') as f:
            f.write(text if text is not None else ''.join(json.dumps(e) + '\n' for e in entries))
        return replay_check(reference=self.reference, program=path, seeds=1)

    def calls(self):
        return json.loads(json.dumps(self.entries))

    def call_named(self, entries, name):
        return next(e for e in entries if e.get('c') == name)

    def test_honest_program_is_ok(self):
        result = self.check(self.entries)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        self.assertEqual(result['instructions'], 3)

    def test_unknown_call(self):
        entries = self.calls()
        self.call_named(entries, 'nl.multiply')['c'] = 'os.system'
        result = self.check(entries)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn("unknown call 'os.system'", result['message'])

    def test_bad_reference_id(self):
        entries = self.calls()
        self.call_named(entries, 'nl.load')['a'] = [{'ref': 999}]
        result = self.check(entries)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('unknown value 999', result['message'])

    def test_view_outside_its_allocation(self):
        entries = self.calls()
        load = self.call_named(entries, 'nl.load')
        load['a'] = [{'view': {'ref': 0}, 'block': [], 'offset': 8000, 'shape': [128, 64], 'strides': [64, 1],
                      'index_map': None, 'in_bounds': True, 'tensor_indexed': True}]
        result = self.check(entries)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('outside its allocation', result['message'])

    def test_view_definitions_are_checked(self):
        entries = self.calls()
        self.call_named(entries, 'nl.load')['a'] = [{'vref': 0}]
        self.assertIn('undefined view 0', self.check(entries)['message'])
        outside = {'view': {'ref': 0}, 'block': [], 'offset': 8000, 'shape': [128, 64], 'strides': [64, 1],
                   'index_map': None, 'in_bounds': True, 'tensor_indexed': True}
        entries = self.calls()
        entries.insert(1, {'viewdef': 1, 'of': outside})
        self.assertIn('view definition 1 out of order', self.check(entries)['message'])
        entries = self.calls()
        load = self.call_named(entries, 'nl.load')
        entries.insert(entries.index(load), {'viewdef': 0, 'of': outside})
        load['a'] = [{'vref': 0}]
        result = self.check(entries)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('outside its allocation', result['message'])

    def test_unknown_value_kind_and_dtype(self):
        for bad in ({'pickle': 'x'}, {'dtype': 'object'}, [1, 2]):
            entries = self.calls()
            self.call_named(entries, 'nl.multiply')['a'][1] = bad
            with self.subTest(bad=bad):
                self.assertEqual(self.check(entries)['verdict'], 'RUNTIME_ERROR')

    def test_wrong_input_declaration(self):
        entries = self.calls()
        entries[0] = dict(entries[0], inputs=[[[1, 1], 'float32']])
        result = self.check(entries)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('declares inputs', result['message'])

    def test_truncated_and_garbage_programs(self):
        self.assertIn('without a return', self.check(self.entries[:-1])['message'])
        self.assertIn('not JSON', self.check(text='{"program": \n')['message'])
        self.assertIn('no instruction stream', self.check(text='')['message'])
        self.assertIn('bad kernel name', self.check([dict(self.entries[0], kernel='k\nI id=0')])['message'])

    def test_deeply_nested_lines_are_malformed_not_a_harness_failure(self):
        for text in ('[' * 100000 + '\n', json.dumps(self.entries[0]) + '\n' + '{"c":' + '[' * 100000 + '\n'):
            result = self.check(text=text)
            self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
            self.assertIn('nests too deeply', result['message'])

    def test_forged_failure_entry_cannot_be_ok(self):
        result = self.check(self.entries + [{'error': {'verdict': 'OK', 'message': 'all good', 'line': 0}}])
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')

    def test_a_malformed_affine_range_context_is_refused(self):
        for bad in ([[1]], [[1, 'x']], {'loop': 1}, [[1, 2.0]]):
            entries = self.calls()
            entries.insert(1, {'affine': bad})
            with self.subTest(bad=bad):
                result = self.check(entries)
                self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
                self.assertIn('bad affine_range context', result['message'])

    def test_missing_program(self):
        result = replay_check(reference=self.reference, program=os.path.join(self.ws.root, 'none'), seeds=1)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('produced no program', result['message'])


class LowPrecisionBanTest(unittest.TestCase):
    def test_the_replay_refuses_a_banned_format_the_kernel_text_hides(self):
        # step A's ban reads the kernel's text; `getattr(nl, 'bfloat' + '16')` names no banned type there, so the
        # trusted replay checks the program's own dtypes
        ws = Workspace()
        self.addCleanup(ws.close)
        reference = ws.reference(SIMPLE_REFERENCE)
        kernel = ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.load(x, dtype=getattr(nl, 'bfloat' + '16'))  # <- here
                nl.store(out, value=nl.multiply(tile, 2.0))
                return out
            ''')
        program = os.path.join(ws.root, 'bf16.jsonl')
        subprocess.run([sys.executable, os.path.join(HARNESS, 'run_kernel.py'), '--problem', reference, '--kernel',
                        kernel, '--ban-low-precision', '--program-out', program], check=True)
        banned = replay_check(reference=reference, program=program, seeds=1, ban_low_precision=True)
        self.assertEqual(banned['verdict'], 'COMPILE_ERROR', banned['message'])
        self.assertIn("low-precision type 'bfloat16' is not allowed", banned['message'])
        self.assertEqual(banned['line'], line_of(kernel, '# <- here'))
        self.assertNotEqual(replay_check(reference=reference, program=program, seeds=1)['verdict'], 'COMPILE_ERROR')

class AffineWriteConflictTest(unittest.TestCase):
    """Step A records the affine_range iteration each call runs in (`affine` entries) and the replay checks write
    conflicts in it: different iterations of one affine_range loop writing the same element."""

    KERNEL = '''
        @nki.jit
        def kernel(x):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            for i in nl.affine_range(2):
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))  # <- here
            return out
        '''

    def test_the_replay_finds_the_conflict_in_the_recorded_context(self):
        ws = Workspace()
        self.addCleanup(ws.close)
        reference = ws.reference(SIMPLE_REFERENCE)
        kernel = ws.kernel(self.KERNEL)
        program = os.path.join(ws.root, 'conflict.jsonl')
        subprocess.run([sys.executable, os.path.join(HARNESS, 'run_kernel.py'), '--problem', reference,
                        '--kernel', kernel, '--program-out', program], check=True)
        with open(program) as f:
            entries = [json.loads(line) for line in f]
        self.assertFalse(any('error' in e for e in entries), 'step A leaves the check to the replay')
        self.assertEqual([e['affine'] for e in entries if 'affine' in e], [[[1, 0]], [[1, 1]], []])
        result = replay_check(reference=reference, program=program, seeds=1)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('Unexpected output dependencies', result['message'])
        self.assertEqual(result['line'], line_of(kernel, '# <- here'))
        # the same program without its context runs the iterations one after the other: no conflict to find
        path = os.path.join(ws.root, 'no_context.jsonl')
        with open(path, 'w') as f:
            f.write(''.join(json.dumps(e) + '\n' for e in entries if 'affine' not in e))
        self.assertEqual(replay_check(reference=reference, program=path, seeds=1)['verdict'], 'OK')

    def test_the_refusal_names_the_kernels_file_as_step_a_does(self):
        # run_kernel.py on a kernel file not named kernel.py: the replay's message named `kernel.py` (the worker's
        # file name) while step A's messages name the file given (round 45a, a public chunked linear attention)
        ws = Workspace()
        self.addCleanup(ws.close)
        reference = ws.reference(SIMPLE_REFERENCE)
        kernel = ws.write('chunked_state.py', 'import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n'
                          + textwrap.dedent(self.KERNEL))
        result = ws.evaluate(reference, kernel)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        line = line_of(kernel, '# <- here')
        self.assertTrue(result['message'].startswith(f'chunked_state.py:{line}: nl.store(out, value='),
                        result['message'])


class StreamedProgramTest(unittest.TestCase):
    """Step B reads the program as step A writes it (through a pipe), so a verdict can come before the program ends."""

    @classmethod
    def setUpClass(cls):
        cls.ws, cls.reference, cls.lines = recorded_doubling_program()

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def replay_from_pipe(self, text):
        """replay_check.py on a pipe that gets `text` and is then held open (never closed): the result JSON."""
        read_end, write_end = os.pipe()
        try:
            os.write(write_end, text.encode())
            done = subprocess.run([sys.executable, os.path.join(HARNESS, 'replay_check.py'), '--problem',
                                   self.reference, '--program', f'fd:{read_end}', '--seeds', '1'],
                                  pass_fds=(read_end,), capture_output=True, text=True, timeout=120)
        finally:
            os.close(read_end)
            os.close(write_end)
        return json.loads(done.stdout)

    def test_a_malformed_line_ends_the_replay_before_the_program_ends(self):
        result = self.replay_from_pipe(''.join(self.lines[:3]) + 'not json\n')
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('program line 4 is not JSON', result['message'])

    def test_a_recorded_failure_ends_the_replay_before_the_program_ends(self):
        failure = {'error': {'verdict': 'COMPILE_ERROR', 'message': 'kernel.py:3: recorded', 'line': 3}}
        result = self.replay_from_pipe(''.join(self.lines[:3]) + json.dumps(failure) + '\n')
        self.assertEqual((result['verdict'], result['message'], result['line']),
                         ('COMPILE_ERROR', 'kernel.py:3: recorded', 3))

    def test_a_program_over_the_size_limit_is_the_kernels_failure(self):
        text = ''.join(self.lines)
        with self.assertRaises(RecordedFailure) as raised:
            list(read_program(text.splitlines(keepends=True), max_chars=len(text) - 1).entries)
        self.assertEqual(raised.exception.entry['verdict'], 'RUNTIME_ERROR')
        self.assertIn("the kernel's program exceeds", raised.exception.entry['message'])
        self.assertEqual(len(list(read_program(text.splitlines(keepends=True), max_chars=len(text)).entries)),
                         len(self.lines) - 1)

    def test_a_source_line_is_quoted_when_the_kernels_text_is_given(self):
        kernel = self.ws.kernel(DOUBLING_KERNEL)
        entries = [json.loads(line) for line in self.lines]
        multiply = next(e for e in entries if e.get('c') == 'nl.multiply')
        multiply['a'][0] = {'ref': 0}     # the HBM input itself: not a tile a compute engine reads
        path = os.path.join(self.ws.root, 'quoted.jsonl')
        with open(path, 'w') as f:
            f.write(''.join(json.dumps(e) + '\n' for e in entries))
        with open(kernel) as f:
            source = f.readlines()[multiply['l'] - 1].strip()
        quoted = replay_check(reference=self.reference, program=path, seeds=1, kernel_source=kernel)
        plain = replay_check(reference=self.reference, program=path, seeds=1)
        self.assertNotEqual(quoted['verdict'], 'OK')
        recorded = entries[0]['kernel']     # the file name step A loaded (kernel.py in the worker)
        self.assertTrue(quoted['message'].startswith(f"{recorded}:{multiply['l']}: {source}\n"), quoted['message'])
        self.assertEqual(quoted['message'].split('\n', 1)[1], plain['message'].split(': ', 1)[1])


class DynamicCopyProgramTest(unittest.TestCase):
    """A dynamic copy's program carries the access and the offset's tile, never the offset: the replay reads it
    from its own SBUF, and checks the access's geometry."""

    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        cls.reference = cls.ws.reference('''
def get_inputs():
    return [np.random.normal(size=(32, 64)).astype(np.float32), np.array([[np.random.randint(0, 49)]], np.int32)]


def forward(x, offs):
    return x[:, offs[0, 0]:offs[0, 0] + 16]
''' + STANDARD_TRANSFORMS)
        kernel = cls.ws.kernel('''
            @nki.jit
            def kernel(x, offs):
                out = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.shared_hbm)
                off = nl.load(offs)
                nl.store(out, value=nisa.tensor_copy_dynamic_src(nl.load(x)[:, nl.ds(off[0, 0], 16)]))
                return out
            ''')
        cls.record(kernel, 'dynamic.jsonl')

    @classmethod
    def record(cls, kernel, name):
        """Step A alone: the kernel's program, as entries."""
        cls.program = os.path.join(cls.ws.root, name)
        subprocess.run([sys.executable, os.path.join(HARNESS, 'run_kernel.py'), '--problem', cls.reference,
                        '--kernel', kernel, '--program-out', cls.program], check=True)
        with open(cls.program) as f:
            cls.entries = [json.loads(line) for line in f]

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def replay(self, entries):
        path = os.path.join(self.ws.root, 'forged.jsonl')
        with open(path, 'w') as f:
            f.write(''.join(json.dumps(e) + '\n' for e in entries))
        return replay_check(reference=self.reference, program=path, seeds=3)

    def copy_source(self, entries):
        return next(e for e in entries if e.get('c') == 'nisa.tensor_copy_dynamic_src')['a'][0]

    def test_the_program_holds_no_offset_and_replays_on_every_seed(self):
        source = self.copy_source(self.entries)
        self.assertEqual(set(source), {'indirect', 'index', 'row_stride', 'rows', 'scalar'})
        self.assertEqual((source['row_stride'], source['rows']), (1, 49))
        result = self.replay(self.entries)       # seeds draw other offsets than the recording saw (none)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_a_forged_offset_range_is_refused(self):
        entries = json.loads(json.dumps(self.entries))
        self.copy_source(entries)['rows'] = 50      # offset 49 would read past each partition's 64 elements
        result = self.replay(entries)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR')
        self.assertIn('bad dynamic offset access geometry', result['message'])


class DynamicRunsProgramTest(DynamicCopyProgramTest):
    """The older multi-offset form: the program carries the access, the axis the offsets run along and the
    offsets' tile, never their values; the replay checks the geometry against the tile it reads them from."""

    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        cls.reference = cls.ws.reference('''
def get_inputs():
    return [np.random.normal(size=(1, 32, 4)).astype(np.float32),
            np.random.randint(0, 32, size=(8, 1)).astype(np.int32)]


def forward(data, idx):
    return data[0, idx[:, 0], :]
''' + STANDARD_TRANSFORMS)
        kernel = cls.ws.kernel('''
            @nki.jit
            def kernel(data, idx):
                out = nl.ndarray((8, 4), dtype=data.dtype, buffer=nl.shared_hbm)
                iy, iz = nl.mgrid[0:8, 0:4]
                nl.store(out, value=nisa.tensor_copy_dynamic_src(nl.load(data)[0, nl.load(idx), iz]))
                return out
            ''')
        cls.record(kernel, 'runs.jsonl')

    def test_the_program_holds_no_offset_and_replays_on_every_seed(self):
        source = self.copy_source(self.entries)
        self.assertEqual(set(source), {'indirect', 'index', 'row_stride', 'rows', 'scalar', 'runs'})
        self.assertEqual((source['row_stride'], source['rows'], source['runs']), (4, 32, 0))
        result = self.replay(self.entries)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_a_forged_offset_range_is_refused(self):
        for field, value, message in (('rows', 33, 'bad dynamic offsets access geometry'),
                                      ('runs', 1, 'bad dynamic offsets access geometry'),
                                      ('runs', 7, 'bad dynamic offsets access geometry'),
                                      ('scalar', True, 'bad runs axis')):
            entries = json.loads(json.dumps(self.entries))
            self.copy_source(entries)[field] = value
            result = self.replay(entries)
            self.assertEqual(result['verdict'], 'RUNTIME_ERROR', (field, value))
            self.assertIn(message, result['message'])


class ViewDefinitionParseTest(unittest.TestCase):
    """parse_program decodes the recorder's spelling of a viewdef line itself (its geometry text once): whatever
    a line holds, the result is json.loads's, or the same refusal."""

    HEADER = json.dumps({'program': FORMAT, 'kernel': 'k.py', 'grid': [], 'inputs': []}) + '\n'
    VIEWDEF = ('{"viewdef":0,"of":{"view":{"ref":0},"block":[1,2],"offset":-3,"shape":[128,1],"strides":[1,0],'
               '"index_map":[[128,0,[[0,1]]]],"in_bounds":true,"tensor_indexed":true}}')

    def parsed(self, line):
        try:
            return parse_program([self.HEADER, line, line]).entries
        except ProgramError as error:
            return str(error)

    def test_lines_decode_as_json_does(self):
        geometry = self.VIEWDEF.split(',"shape":', 1)[1]
        lines = [self.VIEWDEF, self.VIEWDEF + '\n', self.VIEWDEF + '\r\n', self.VIEWDEF + ' x\n', self.VIEWDEF[:-1],
                 self.VIEWDEF.replace('[1,2]', '[]'), self.VIEWDEF.replace('-3', '01'),
                 self.VIEWDEF.replace('-3', '-0'), self.VIEWDEF.replace('-3', '3.0'),
                 self.VIEWDEF.replace('true}}', 'true,"block":[9]}}'), self.VIEWDEF.replace('true}}', 'true},"of":5}'),
                 self.VIEWDEF.replace('"shape":[128,1]', '"shape":[128,1],"shape":[2,2]'),
                 self.VIEWDEF.replace('"in_bounds":true', '"in_bounds":NaN'),
                 self.VIEWDEF.replace('{"ref":0}', '{"ref":0,"shape":[1]}'),
                 '{"viewdef":1,"of":{"view":{"ref":0},"block":[],"offset":0,"shape":' + geometry[:-2] + '}'
                 ',"x":{"shape":' + geometry]
        for line in lines:
            with self.subTest(line=line):
                try:
                    expected = [json.loads(line)] * 2
                except ValueError:
                    expected = None
                result = self.parsed(line)
                if expected is None:
                    self.assertIsInstance(result, str)
                    self.assertIn('is not JSON', result)
                else:
                    self.assertEqual(result, expected)


class AffineLineParseTest(unittest.TestCase):
    """parse_program decodes the recorder's spelling of an `affine` line itself (an AffineLine); the entry is
    json.loads's, and any other spelling goes through the JSON decoder."""

    def parsed(self, line):
        entries = list(parse_program([ViewDefinitionParseTest.HEADER, line]).entries)
        return [e.entry() if isinstance(e, AffineLine) else e for e in entries], \
            [isinstance(e, AffineLine) for e in entries]

    def test_lines_decode_as_json_does(self):
        fast = ['{"affine":[]}', '{"affine":[[1,0]]}\n', '{"affine":[[3,0],[7,12],[9,100]]}']
        slow = ['{"affine":[[1,-2]]}', '{"affine":[[1,02]]}', '{"affine":[[1,0],]}', '{"affine":[[1,0]]} \n',
                '{"affine":[[1,0]],"x":1}', '{"affine":[[1,0,2]]}']
        for line, expected_fast in [(line, True) for line in fast] + [(line, False) for line in slow]:
            with self.subTest(line=line):
                try:
                    entries, kinds = self.parsed(line)
                except ProgramError:    # (the JSON decoder refuses a malformed line)
                    self.assertFalse(expected_fast)
                    continue
                self.assertEqual(entries, [json.loads(line)])
                self.assertEqual(kinds, [expected_fast])


class CallLineParseTest(unittest.TestCase):
    """parse_program decodes the recorder's spelling of a call line with only references as arguments itself (a
    CallLine, its keywords text decoded once): whatever a line holds, the entry is json.loads's (the result id
    aside, which the replay does not read), or the same refusal."""

    HEADER = ViewDefinitionParseTest.HEADER
    CALL = ('{"c":"nisa.nc_matmul","a":[{"vref":4},{"ref":12}],"k":{"is_transpose":true,"mask":null},"l":47,'
            '"r":29}')

    def parsed(self, line):
        try:
            entries = parse_program([self.HEADER, line, line]).entries
        except ProgramError as error:
            return str(error)
        return [e.entry() if isinstance(e, CallLine) else e for e in entries], \
            [isinstance(e, CallLine) for e in entries]

    def test_lines_decode_as_json_does(self):
        call = self.CALL
        fast = [call, call + '\n', call.replace('"r":29', '"r":null'),
                call.replace('"a":[{"vref":4},{"ref":12}]', '"a":[]'), call.replace('{"ref":12}', '{"vref":0}'),
                call.replace('"k":{"is_transpose":true,"mask":null}', '"k":{}'),
                call.replace('"mask":null', '"mask":null,"x":{"y":",\\"l\\":1,\\"r\\":2}"}'),
                call.replace('"mask":null', '"mask":{"a":1},"l":5,"r":null'),
                call.replace('"mask":null', '"mask":null,"mask":1')]
        slow = [call + '\r\n', call + ' x\n', call[:-1], call.replace('{"ref":12}', '{"ref":012}'),
                call.replace('{"ref":12}', '{"ref":-1}'), call.replace('{"ref":12}', '{"ref":12,"x":1}'),
                call.replace('{"ref":12}', '{"ref":1.0}'), call.replace('"l":47', '"l":47.0'),
                call.replace('"r":29', '"r":29,"l":3'), call.replace('"r":29', '"r":[1]'),
                call.replace('"mask":null', '"mask":nul'), call.replace('"mask":null}', '"mask":null} '),
                call.replace('"mask":null}', '"mask":null}}'), call.replace('{"is_transpose"', '["is_transpose"'),
                call.replace('"c":"nisa.nc_matmul"', '"c":"nisa.nc\\u005fmatmul"'), call.replace('"l":47', '"l":NaN'),
                call.replace(',"l":47', ''), call.replace('{"c"', '{"c" ')]
        for line, taken in [(line, True) for line in fast] + [(line, False) for line in slow]:
            with self.subTest(line=line):
                try:
                    expected = json.loads(line)
                except ValueError:
                    expected = None
                result = self.parsed(line)
                if expected is None:
                    self.assertIsInstance(result, str)
                    self.assertIn('is not JSON', result)
                    continue
                entries, fast_path = result
                self.assertEqual(fast_path, [taken] * 2)
                if taken:
                    del expected['r']
                self.assertEqual(entries, [expected] * 2)


if __name__ == '__main__':
    unittest.main()


EXAMPLES = os.path.join(HARNESS, '..', '..', '..', 'examples')


class HonestTraceTest(unittest.TestCase):
    """The trace step B writes is the one a direct in-process simulation of the kernel writes."""

    def test_examples_trace_identically(self):
        ws = Workspace()
        self.addCleanup(ws.close)
        for name in ('silu', 'matmul', 'rmsnorm_matmul', 'softmax'):
            with self.subTest(example=name):
                reference = os.path.join(EXAMPLES, name, 'reference_small.py')
                kernel = os.path.join(EXAMPLES, name, 'kernel.py')
                trace_path = os.path.join(ws.root, name + '.trace')
                result = evaluate(reference=reference, kernel=kernel, seeds=1, trace_out=trace_path)
                self.assertEqual(result['verdict'], 'OK', result['message'])
                module = load_problem(reference).module
                np.random.seed(result['fresh_seed'])     # the secret seed of the traced run, named afterwards
                inputs = module.transform_to_nki_inputs(module.get_inputs())
                entry = load_module(kernel, f'direct_{name}').kernel
                _, recorder = simulate(entry, inputs)
                with open(trace_path) as f:
                    self.assertEqual(f.read(), recorder.text())
