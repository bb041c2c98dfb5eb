"""The builtin rewrite engine on the example baselines and on small dedicated kernels.

Each transformation's output (a) parses, (b) has the expected structure, (c) is judged OK by the profiler
harness against the example's small reference (skipped while the harness does not exist). Non-applicable
sites give precise reasons; garbage input gives a clean error.

Run from the repository root: /usr/bin/python3 -m unittest discover -s services/executor/builtin/tests -t .
"""
import ast
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILTIN = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(BUILTIN)))
sys.path.insert(0, BUILTIN)

from nki_rewrite import Plan, PlanError, analyze, apply  # noqa: E402

PYTHON = '/usr/bin/python3'
HARNESS = os.path.join(ROOT, 'services', 'profiler', 'harness', 'run_kernel.py')
CLI = os.path.join(BUILTIN, 'nki_rewrite', 'cli.py')
EXAMPLES = os.path.join(ROOT, 'examples')
HEADER = ('import neuronxcc.nki as nki\nimport neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl\n\n\n')


def example(problem):
    with open(os.path.join(EXAMPLES, problem, 'kernel.py')) as f:
        return f.read()


def harness_verdict(problem, source):
    """(verdict, message) of the harness for source against examples/<problem>/reference_small.py."""
    with tempfile.NamedTemporaryFile('w', suffix='.py', prefix='rewritten_', delete=False) as f:
        f.write(source)
    try:
        proc = subprocess.run([PYTHON, HARNESS, '--problem', os.path.join(EXAMPLES, problem, 'reference_small.py'),
                               '--kernel', f.name, '--metadata', os.path.join(EXAMPLES, problem, 'problem_small.yaml'),
                               '--seeds', '1'], capture_output=True, text=True, timeout=120, cwd=ROOT)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        return result['verdict'], result.get('message', '')
    finally:
        os.unlink(f.name)


def line_of(source, text, nth=0):
    return [i for i, l in enumerate(source.splitlines(), 1) if text in l][nth]


def kernel_func(source):
    module = ast.parse(source)
    return next(n for n in module.body if isinstance(n, ast.FunctionDef))


def loops_in(node):
    return [n for n in ast.walk(node) if isinstance(n, ast.For)]


def calls_named(node, attr):
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == attr]


class RewriteTestCase(unittest.TestCase):
    def applied(self, source, transformation, site=None, params=None):
        result = apply(source, transformation, site, params)
        self.assertTrue(result['ok'], result.get('reason'))
        ast.parse(result['source'])
        self.assertNotEqual(result['source'], source)
        for key in ('description', 'before_snippet', 'after_snippet', 'plan', 'sentence'):
            self.assertTrue(result[key], key)
        return result['source']

    def refused(self, source, transformation, site=None, params=None, contains=()):
        result = apply(source, transformation, site, params)
        self.assertFalse(result['ok'])
        for text in contains:
            self.assertIn(text, result['reason'])
        return result['reason']

    def assertCorrect(self, problem, source):
        if not os.path.exists(HARNESS):
            self.skipTest('the profiler harness (services/profiler/harness/run_kernel.py) does not exist yet')
        verdict, message = harness_verdict(problem, source)
        self.assertEqual(verdict, 'OK', message)


class HoistTest(RewriteTestCase):
    def test_hoist_invariant_load_out_of_head_loop(self):
        src = example('rope')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'cos_tile = nl.load' in l)
        new = self.applied(src, 'hoist_invariant_load', f'S{line}')
        outer = loops_in(kernel_func(new))[0]
        direct_loads = [s for s in outer.body if isinstance(s, ast.Assign) and 'cos_tile' in ast.unparse(s.targets[0])]
        self.assertEqual(len(direct_loads), 1, 'the cos load sits directly in the sequence-tile loop')
        inner = loops_in(kernel_func(new))[1]
        self.assertNotIn('cos_tile = ', ast.unparse(inner))
        self.assertCorrect('rope', new)

    def test_hoist_refuses_load_that_uses_the_loop_variable(self):
        src = example('matmul')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'a_tile = nl.load' in l)
        reason = self.refused(src, 'hoist_invariant_load', f'S{line}')
        self.assertIn("the load's index uses k", reason)
        self.assertIn('kernel.py:', reason)
        loop_line = next(i for i, l in enumerate(src.splitlines(), 1) if 'for k in' in l)
        reason = self.refused(src, 'hoist_invariant_load', f'L{loop_line}')
        self.assertIn(f'no loop-invariant nl.load in kernel.py:{loop_line} loop over k', reason)
        self.assertIn('a_tile', reason)

    def test_hoist_refuses_load_of_a_tensor_the_loop_writes(self):
        src = HEADER + textwrap.dedent('''\
            @nki.jit
            def kernel(x):
                M, N = x.shape
                out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.sequential_range(M // 128):
                    t = nl.load(out[0:128, 0:N])
                    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=t)
                return out
            ''')
        self.refused(src, 'hoist_invariant_load', f"S{line_of(src, 't = nl.load')}", contains=['the loop writes out'])

    def test_sink_invariant_store(self):
        src = HEADER + textwrap.dedent('''\
            @nki.jit
            def kernel(x):
                M, N = x.shape
                out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(M // 128):
                    x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
                    y = nl.silu(x_tile)
                    for r in nl.sequential_range(2):
                        nl.store(out[i * 128:(i + 1) * 128, :], value=y)
                return out
            ''')
        new = self.applied(src, 'hoist_invariant_store', f"S{line_of(src, 'nl.store')}")
        inner = loops_in(kernel_func(new))[1]
        self.assertEqual(len(calls_named(inner, 'store')), 0)
        self.assertEqual(len(calls_named(loops_in(kernel_func(new))[0], 'store')), 1)
        self.assertCorrect('silu', src)
        self.assertCorrect('silu', new)
        self.refused(src, 'hoist_invariant_store', f"S{line_of(src, 'y = nl.silu')}", contains=['not `nl.store'])


class WidenDmaTest(RewriteTestCase):
    def test_widen_loop_of_narrow_loads(self):
        src = example('matmul')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'b_tile = nl.load' in l)
        new = self.applied(src, 'widen_dma', f'S{line}')
        k_loop = loops_in(kernel_func(new))[2]
        wide = [s for s in k_loop.body if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == 'b_tile_wide']
        self.assertEqual(len(wide), 1)
        self.assertIn('n * 512 + 512', ast.unparse(wide[0].value))
        j_loop = loops_in(k_loop)[1]
        self.assertEqual(len(calls_named(j_loop, 'load')), 0)
        self.assertIn('b_tile = b_tile_wide[:, j * 128:j * 128 + 128]', ast.unparse(j_loop))
        self.assertCorrect('matmul', new)

    def test_merge_consecutive_loads(self):
        src = HEADER + textwrap.dedent('''\
            @nki.jit
            def kernel(x):
                M, N = x.shape
                out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(M // 128):
                    a = nl.load(x[i * 128:(i + 1) * 128, 0:256])
                    b = nl.load(x[i * 128:(i + 1) * 128, 256:512])
                    c = nl.load(x[i * 128:(i + 1) * 128, 512:768])
                    d = nl.load(x[i * 128:(i + 1) * 128, 768:1024])
                    nl.store(out[i * 128:(i + 1) * 128, 0:256], value=nl.silu(a))
                    nl.store(out[i * 128:(i + 1) * 128, 256:512], value=nl.silu(b))
                    nl.store(out[i * 128:(i + 1) * 128, 512:768], value=nl.silu(c))
                    nl.store(out[i * 128:(i + 1) * 128, 768:1024], value=nl.silu(d))
                return out
            ''')
        new = self.applied(src, 'widen_dma', f"S{line_of(src, 'a = nl.load')}")
        loop = loops_in(kernel_func(new))[0]
        loads = calls_named(loop, 'load')
        self.assertEqual(len(loads), 1)
        self.assertIn('0:1024', ast.unparse(loads[0]))
        self.assertCorrect('silu', new)

    def test_widen_refuses_partition_axis(self):
        src = example('matmul')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'a_tile = nl.load' in l)
        self.refused(src, 'widen_dma', f'S{line}', contains=['k moves the partition axis'])


class LoopTest(RewriteTestCase):
    def test_split_loop(self):
        src = example('matmul')
        new = self.applied(src, 'split_loop', 'L17', {'factor': 2})
        loops = loops_in(kernel_func(new))
        self.assertEqual(len(loops), 6)
        self.assertEqual(ast.unparse(loops[0].target), 'm_o')
        self.assertEqual(ast.unparse(loops[1].target), 'm_i')
        self.assertIn('assert M // 128 % 2 == 0', new)
        self.assertIn('(m_o * 2 + m_i) * 128', new)
        self.assertCorrect('matmul', new)
        self.refused(src, 'split_loop', 'L22', {'factor': 3}, contains=['trip count 4 is not a multiple of 3'])

    def test_interchange_loops(self):
        src = example('matmul')
        new = self.applied(src, 'interchange_loops', 'L17')
        loops = loops_in(kernel_func(new))
        self.assertEqual([ast.unparse(l.target) for l in loops[:2]], ['n', 'm'])
        self.assertCorrect('matmul', new)
        self.refused(src, 'interchange_loops', 'L18', contains=['not perfectly nested'])
        seq = src.replace('for m in nl.affine_range', 'for m in nl.sequential_range')
        self.refused(seq, 'interchange_loops', 'L17', contains=['sequential_range'])

    def test_fuse_loops(self):
        src = example('adamw')
        lines = [i for i, l in enumerate(src.splitlines(), 1) if l.startswith('    for i in')]
        new = self.applied(src, 'fuse_loops', f'L{lines[0]}')
        outer = [l for l in loops_in(kernel_func(new)) if ast.unparse(l.target) == 'i']
        self.assertEqual(len(outer), 2)
        self.assertEqual(len([s for s in outer[0].body if isinstance(s, ast.For)]), 2)
        self.assertCorrect('adamw', new)
        # the inner j loops of the fused body are now adjacent and fuse as well
        inner_line = next(l.lineno for l in loops_in(outer[0]) if ast.unparse(l.target) == 'j')
        newer = self.applied(new, 'fuse_loops', f'L{inner_line}')
        self.assertCorrect('adamw', newer)

    def test_fuse_refuses_dependence_at_another_index(self):
        src = HEADER + textwrap.dedent('''\
            @nki.jit
            def kernel(x):
                M, N = x.shape
                out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(M // 128):
                    t = nl.load(x[i * 128:(i + 1) * 128, :])
                    nl.store(out[i * 128:(i + 1) * 128, :], value=t)
                for i in nl.affine_range(M // 128):
                    u = nl.load(out[0:128, :])
                    nl.store(out[i * 128:(i + 1) * 128, :], value=nl.silu(u))
                return out
            ''')
        first, second = line_of(src, 'for i in', 0), line_of(src, 'for i in', 1)
        reason = self.refused(src, 'fuse_loops', f'L{first}')
        self.assertIn(f'L{second} reads out[0:128, :] while L{first} writes out[i * 128:(i + 1) * 128, :]', reason)
        self.refused(src, 'fuse_loops', f'L{second}', contains=['not directly followed by another loop'])


class EngineTest(RewriteTestCase):
    def test_move_multiply_to_gpsimd(self):
        src = example('silu')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'nl.multiply' in l)
        new = self.applied(src, 'move_elementwise_engine', f'S{line}', {'engine': 'gpsimd'})
        tt = calls_named(kernel_func(new), 'tensor_tensor')
        self.assertEqual(len(tt), 1)
        self.assertIn('engine=nisa.gpsimd_engine', ast.unparse(tt[0]))
        self.assertIn('import neuronxcc.nki.isa as nisa', new)
        self.assertCorrect('silu', new)
        self.refused(src, 'move_elementwise_engine', f'S{line}', {'engine': 'scalar'},
                     contains=['no tensor-tensor instruction'])

    def test_move_scalar_multiply_to_act(self):
        src = example('adamw')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'm_scaled = nl.multiply' in l)
        new = self.applied(src, 'move_elementwise_engine', f'S{line}', {'engine': 'scalar'})
        ts = calls_named(kernel_func(new), 'tensor_scalar')
        self.assertEqual(len(ts), 1)
        self.assertIn('operand0=beta1', ast.unparse(ts[0]))
        self.assertCorrect('adamw', new)

    def test_candidates_name_the_engine_the_work_runs_on(self):
        # tensor-tensor work runs on VectorE (ACT has none); tensor_scalar work and copies on ACT or DVE (auto)
        rope = [c for c in analyze(example('rope'))['transformations']
                if c['transformation'] == 'move_elementwise_engine']
        self.assertTrue(rope)
        self.assertEqual({c['source_engine'] for c in rope}, {'vector'})
        adamw = [c for c in analyze(example('adamw'))['transformations']
                 if c['transformation'] == 'move_elementwise_engine' and c['params']['engine'] == 'scalar']
        self.assertIn('auto', {c['source_engine'] for c in adamw})
        self.assertNotIn('source_engine', [k for c in analyze(example('rope'))['transformations']
                                           if c['transformation'] != 'move_elementwise_engine' for k in c])

    def test_gpsimd_cannot_read_psum(self):
        path = os.path.join(EXAMPLES, 'swiglu', 'variants', 'psum_fused.py')
        with open(path) as f:
            src = f.read()
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'nl.multiply(act, u_psum)' in l)
        self.refused(src, 'move_elementwise_engine', f'S{line}', {'engine': 'gpsimd'},
                     contains=['GpSimd engine cannot access PSUM'])


class PsumTest(RewriteTestCase):
    def test_batch_psum_evictions(self):
        src = example('matmul')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'res_sb = nl.copy' in l) - 1
        new = self.applied(src, 'batch_psum_evictions', f'L{line}')
        n_loop = loops_in(kernel_func(new))[1]
        copies = [c for c in calls_named(n_loop, 'copy')]
        self.assertEqual(len(copies), 1)
        self.assertIn('res_psum[:, 0:512]', ast.unparse(copies[0]))
        self.assertEqual(len([l for l in loops_in(n_loop) if ast.unparse(l.target) == 'j']), 1)
        self.assertCorrect('matmul', new)
        self.refused(src, 'batch_psum_evictions', 'L20', contains=['no strip-wise PSUM eviction', 'loop over k'])


class VectorizeTest(RewriteTestCase):
    def test_vectorize_head_loop_of_rope(self):
        src = example('rope')
        line = line_of(src, 'for h in nl.affine_range(H)')
        self.assertIn(f'L{line}', [c['site'] for c in analyze(src)['transformations']
                                   if c['transformation'] == 'vectorize_loop'])
        new = self.applied(src, 'vectorize_loop', f'L{line}')
        func = kernel_func(new)
        self.assertEqual([ast.unparse(l.target) for l in loops_in(func)], ['s'], 'the head loop is gone')
        self.assertIn('h_all = nl.arange(H)[None, :, None]', new)
        self.assertIn('nl.ndarray((128, H, D)', new)
        self.assertEqual(len(calls_named(func, 'load')), 3)   # x over all heads, cos, sin
        self.assertEqual(len(calls_named(func, 'store')), 1)
        self.assertEqual(len(calls_named(func, 'multiply')), 4)
        # cos/sin do not move with h: read with a stride-0 index along the head axis
        self.assertIn('cos_tile[nl.arange(128)[:, None, None], 0 * h_all + nl.arange(half)[None, None, :]]', new)
        self.assertCorrect('rope', new)

    def test_vectorize_column_loop_of_silu(self):
        src = example('silu')
        new = self.applied(src, 'vectorize_loop', f'L{line_of(src, "for j in")}')
        self.assertEqual(len(loops_in(kernel_func(new))), 1)
        self.assertIn('j_all * 512 + nl.arange(512)[None, None, :]', new)
        self.assertCorrect('silu', new)

    def test_vectorize_refusals(self):
        src = example('rope')
        outer = line_of(src, 'for s in')
        self.refused(src, 'vectorize_loop', f'L{outer}', contains=['not an innermost loop'])
        body = HEADER + textwrap.dedent('''\
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                for j in nl.sequential_range(4):
                    t = nl.load(x[0:128, j * 512:(j + 1) * 512])
                    nl.store(out[0:128, j * 512:(j + 1) * 512], value=t)
                for j in nl.affine_range(4):
                    t2 = nl.load(x[0:128, j * 512:(j + 1) * 512])
                    u = nl.multiply(t2, j)
                    nl.store(out[0:128, j * 512:(j + 1) * 512], value=u)
                for j in nl.affine_range(4):
                    t3 = nl.load(x[0:128, j * 512:(j + 1) * 512])
                    nl.store(out[0:128, 0:512], value=t3)
                return out
            ''')
        self.assertEqual([c for c in analyze(body)['transformations'] if c['transformation'] == 'vectorize_loop'],
                         [])
        self.refused(body, 'vectorize_loop', f'L{line_of(body, "sequential_range")}',
                     contains=['not an nl.affine_range loop'])
        self.refused(body, 'vectorize_loop', f'L{line_of(body, "affine_range", 0)}',
                     contains=['uses j outside a load or store index'])
        self.refused(body, 'vectorize_loop', f'L{line_of(body, "affine_range", 1)}',
                     contains=['every iteration stores to the same region'])


class ComposeTest(RewriteTestCase):
    def test_widen_then_batch_on_matmul(self):
        src = example('matmul')
        line = next(i for i, l in enumerate(src.splitlines(), 1) if 'b_tile = nl.load' in l)
        step1 = self.applied(src, 'widen_dma', f'S{line}')
        cands = [c for c in analyze(step1)['transformations'] if c['transformation'] == 'batch_psum_evictions']
        self.assertEqual(len(cands), 1)
        step2 = self.applied(step1, 'batch_psum_evictions', cands[0]['site'])
        self.assertCorrect('matmul', step2)


class ApiTest(unittest.TestCase):
    def test_analyze_reports_sites_and_features(self):
        report = analyze(example('matmul'))
        self.assertTrue(report['ok'])
        ids = {t['transformation'] for t in report['transformations']}
        self.assertTrue({'widen_dma', 'batch_psum_evictions', 'interchange_loops', 'split_loop'} <= ids)
        for t in report['transformations']:
            self.assertRegex(t['site'], r'^[LS]\d+$')
            self.assertEqual(Plan.from_line(t['plan']).to_line(), t['plan'])
        features = report['features']
        self.assertEqual(len(features['loops']), 5)
        self.assertEqual(features['totals']['matmuls'], 1)
        self.assertEqual(features['max_loop_depth'], 4)
        self.assertIn(128, features['loops'][0]['dma_widths'])
        self.assertEqual(features['engine_mix']['pe'], 1)

    def test_garbage_inputs_give_clean_errors(self):
        cases = [('def (:', 'not valid Python'), ('x = 1\n', 'no kernel function'), ('\x00', 'kernel.py')]
        for text, expected in cases:
            with self.subTest(text=text):
                self.assertFalse(analyze(text)['ok'])
                result = apply(text, 'widen_dma', 'S1')
                self.assertFalse(result['ok'])
                self.assertIn(expected, result['reason'])
        src = example('matmul')
        self.assertIn('unknown transformation', apply(src, 'unroll_everything')['reason'])
        self.assertIn('is not of the form', apply(src, 'split_loop', 'here')['reason'])
        self.assertIn('no loop at site L3', apply(src, 'split_loop', 'L3')['reason'])
        self.assertIn('factor must be an integer', apply(src, 'split_loop', 'L17', {'factor': 'x'})['reason'])
        self.assertFalse(apply(src, 'split_loop', 'L17', ['not', 'a', 'dict'])['ok'])

    def test_plan_line_round_trip(self):
        plan = Plan('split_loop', 'L14', {'factor': 4})
        self.assertEqual(plan.to_line(), 'builtin: split_loop site=L14 factor=4')
        back = Plan.from_line('builtin: split_loop site=L14 factor=4')
        self.assertEqual(back.params, {'factor': 4})
        self.assertEqual(back, plan)
        self.assertIn('split_loop at L14', plan.sentence())
        with self.assertRaises(PlanError):
            Plan.from_line('widen_dma site=S3')
        with self.assertRaises(PlanError):
            Plan.from_line('builtin: widen_dma site S3')

    def test_cli(self):
        kernel = os.path.join(EXAMPLES, 'matmul', 'kernel.py')
        proc = subprocess.run([PYTHON, CLI, 'apply', '--kernel', kernel, '--plan',
                               'builtin: interchange_loops site=L17'], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(json.loads(proc.stdout)['ok'])
        proc = subprocess.run([PYTHON, CLI, 'apply', '--kernel', kernel, '--transformation', 'fuse_loops',
                               '--site', 'L17'], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 3)
        self.assertIn('not directly followed by another loop', json.loads(proc.stdout)['reason'])
        with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as f:
            f.write('this is ( not python')
        try:
            proc = subprocess.run([PYTHON, CLI, 'analyze', '--kernel', f.name], capture_output=True, text=True,
                                  timeout=60)
        finally:
            os.unlink(f.name)
        self.assertEqual(proc.returncode, 3)
        self.assertEqual(proc.stderr, '')
        self.assertIn('not valid Python', json.loads(proc.stdout)['reason'])
        proc = subprocess.run([PYTHON, CLI, 'analyze', '--kernel', '/nonexistent/k.py'], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertIn('cannot read', json.loads(proc.stdout)['reason'])


if __name__ == '__main__':
    unittest.main()
