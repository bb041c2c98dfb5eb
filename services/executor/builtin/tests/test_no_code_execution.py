"""Kernel text is never executed: payloads in loop bounds and other folded expressions run no code.

Each payload would create a marker file (or exhaust time and memory) if any part of the engine evaluated it.
The kernel puts the payload where the engine folds constants: the trip count of loops (features, split_loop,
widen_dma, batch_psum_evictions) and an index component (fuse_loops' disjointness check). After analysing
the kernel and applying every transformation at every site, no marker may exist.
"""
import ast
import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
BUILTIN = os.path.dirname(HERE)
sys.path.insert(0, BUILTIN)

from nki_rewrite import analyze, apply, catalogue  # noqa: E402
from nki_rewrite.const_eval import const_int  # noqa: E402

CLI = os.path.join(BUILTIN, 'nki_rewrite', 'cli.py')

KERNEL = '''\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b, out):
    for i in nl.affine_range({payload}):
        t = nl.load(a[0:128, i * 64:(i + 1) * 64])
        nl.store(out[0:128, i * 64:(i + 1) * 64], value=t)
    for i in nl.affine_range({payload}):
        u = nl.load(b[{payload}, i])
        nl.store(out[{payload}, i], value=u)
    for j in range({payload}):
        v = nl.load(a[0:128, j * 64:(j + 1) * 64])
        w = nl.add(v, v)
        nl.store(b[0:128, j * 64:(j + 1) * 64], value=w)
'''


def code_payloads(marker: str) -> List[str]:
    """Expressions that touch `marker` when evaluated (the first escapes an empty-builtins eval)."""
    touch = f"'touch {marker}'"
    return [
        "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]"
        f".__init__.__globals__['system']({touch})",
        f"__import__('os').system({touch})",
        f"(lambda: __import__('os').system({touch}))()",
        f"[__import__('os').system({touch}) for _ in (1,)][0]",
        f"getattr(__import__('os'), 'system')({touch})",
        f"len(f\"{{__import__('os').system({touch})}}\")",
        f"(open({marker!r}, 'w').write('x') and 0)",
        f"(s := __import__('os').system({touch}))",
    ]


RESOURCE_PAYLOADS = ['10 ** 10 ** 10', '9 ** 9 ** 9', '1 << 10 ** 10', '(2 ** 64) ** (2 ** 64)',
                     ' * '.join(['2 ** 60'] * 200)]


def sites(report: dict) -> List[str]:
    loops = [loop['site'] for loop in report['features']['loops']]
    return loops + [f'S{line}' for line in range(1, KERNEL.count('\n') + 1)]


class NoCodeExecutionTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix='nki_rewrite_payload_')
        self.marker = os.path.join(self.dir.name, 'executed')

    def tearDown(self) -> None:
        self.dir.cleanup()

    def exercise(self, source: str) -> List[object]:
        """analyze, then apply every transformation at every site; returns the folded trip counts."""
        report = analyze(source)
        self.assertTrue(report['ok'], report.get('reason'))
        ids = [t['id'] for t in catalogue()]
        for site in sites(report):
            for transformation in ids:
                result = apply(source, transformation, site, {})
                self.assertIn('ok', result)
                if not result['ok']:
                    self.assertNotIn('internal error', result['reason'])
        return [loop['trip_const'] for loop in report['features']['loops']]

    def test_folding_a_payload_runs_no_code(self) -> None:
        for index in range(len(code_payloads(self.marker))):
            marker = f'{self.marker}_{index}'
            payload = code_payloads(marker)[index]
            with self.subTest(payload=payload):
                self.assertIsNone(const_int(ast.parse(payload, mode='eval').body))
                self.assertFalse(os.path.exists(marker), f'the payload ran: {payload}')

    def test_kernels_with_payloads_run_no_code(self) -> None:
        for index in range(len(code_payloads(self.marker))):
            marker = f'{self.marker}_{index}'
            payload = code_payloads(marker)[index]
            with self.subTest(payload=payload):
                trips = self.exercise(KERNEL.format(payload=payload))
                self.assertFalse(os.path.exists(marker), f'the payload ran: {payload}')
                self.assertEqual(trips, [None, None, None])

    def test_payloads_through_the_command_line_run_no_code(self) -> None:
        kernel = os.path.join(self.dir.name, 'kernel.py')
        for payload in code_payloads(self.marker)[:2]:
            with self.subTest(payload=payload):
                with open(kernel, 'w') as f:
                    f.write(KERNEL.format(payload=payload))
                for argv in (['analyze', '--kernel', kernel],
                             ['apply', '--kernel', kernel, '--plan', 'builtin: split_loop site=L7 factor=2']):
                    proc = subprocess.run(['/usr/bin/python3', CLI] + argv, capture_output=True, text=True,
                                          timeout=120)
                    self.assertIn('"ok"', proc.stdout)
                self.assertFalse(os.path.exists(self.marker), f'the payload ran: {payload}')

    def test_huge_constants_finish_and_are_not_folded(self) -> None:
        """Each kernel is analysed and rewritten in a child with a deadline: a folded 10**10**10 never ends."""
        script = ('import json, sys; sys.path.insert(0, sys.argv[1]); from nki_rewrite import analyze, apply; '
                  'src = sys.stdin.read(); r = analyze(src); '
                  "s = apply(src, 'split_loop', r['features']['loops'][0]['site'], {'factor': 2}); "
                  "print(json.dumps({'trips': [l['trip_const'] for l in r['features']['loops']], 'split': s['ok']}))")
        for payload in RESOURCE_PAYLOADS:
            with self.subTest(payload=payload[:40]):
                proc = subprocess.run(['/usr/bin/python3', '-c', script, BUILTIN], input=KERNEL.format(payload=payload),
                                      capture_output=True, text=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                result = json.loads(proc.stdout)
                self.assertEqual(result['trips'], [None, None, None])
                # the trip count is not a known constant, so split_loop guards with an assert instead of folding
                self.assertTrue(result['split'])


if __name__ == '__main__':
    unittest.main()
