#!/usr/bin/python3
"""Apply every applicable builtin transformation to the example baselines and measure each rewritten kernel.

For each example and each candidate that `analyze` reports (or only --transformation ID), the rewritten kernel
is checked against reference_small.py by the harness (1 seed) and timed on the trace of the chosen shape by
the Trainium timing model. Prints a markdown table: speedup = baseline latency / rewritten latency.

usage: /usr/bin/python3 services/executor/builtin/tools/measure.py [--realistic] [--transformation ID] [problem ...]
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'examples', 'tools'))

import evaluation  # noqa: E402
from nki_rewrite import analyze, apply  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('problems', nargs='*', default=list(evaluation.PROBLEMS))
    parser.add_argument('--realistic', action='store_true', help='time at problem.yaml shape (timing-only trace)')
    parser.add_argument('--transformation', action='append', help='only these transformations')
    args = parser.parse_args()
    print('| problem | plan | small verdict | latency (ms) | speedup |')
    print('|---|---|---|---|---|')
    for problem in args.problems:
        baseline = os.path.join(evaluation.EXAMPLES, problem, 'kernel.py')
        source = open(baseline).read()
        small_ref, small_meta = evaluation.shape_files(problem, True)
        ref, meta = evaluation.shape_files(problem, not args.realistic)
        _, base = evaluation.latency_ms(ref, baseline, meta, timing_only=args.realistic)
        for cand in analyze(source, 'kernel.py').get('transformations', []):
            if args.transformation and cand['transformation'] not in args.transformation:
                continue
            if cand['transformation'] == 'split_loop':
                continue
            result = apply(source, cand['transformation'], cand['site'], cand['params'])
            if not result['ok']:
                print(f'| {problem} | {cand["plan"]} | not applied: {result["reason"]} | - | - |')
                continue
            with tempfile.NamedTemporaryFile('w', suffix='.py', prefix=f'{problem}_', delete=False) as f:
                f.write(result['source'])
            try:
                check, _ = evaluation.latency_ms(small_ref, f.name, small_meta, seeds=1)
                timing = None
                if check['verdict'] == 'OK':
                    _, timing = evaluation.latency_ms(ref, f.name, meta, timing_only=args.realistic)
            finally:
                os.unlink(f.name)
            if timing is None or base is None:
                print(f'| {problem} | `{cand["plan"]}` | {check["verdict"]} | - | - |', flush=True)
                continue
            print(f'| {problem} | `{cand["plan"]}` | OK | {timing["latency_ms"]:.4f} | '
                  f'{base["latency_ms"] / timing["latency_ms"]:.3f} |', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
