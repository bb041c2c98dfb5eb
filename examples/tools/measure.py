#!/usr/bin/python3
"""Measure every example kernel and variant on the simulator + Trainium timing model; print a markdown table.

usage: /usr/bin/python3 examples/tools/measure.py [--small] [--seeds N] [--timing-only] [problem ...]
Realistic shapes by default (problem.yaml); --small uses reference_small.py / problem_small.yaml.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evaluation  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('problems', nargs='*', default=list(evaluation.PROBLEMS))
    parser.add_argument('--small', action='store_true')
    parser.add_argument('--seeds', type=int, default=1)
    parser.add_argument('--timing-only', action='store_true', help='skip numerics (trace on shapes only)')
    args = parser.parse_args()
    print('| problem | kernel | verdict | latency (ms) | speedup vs kernel.py | % of peak | bound |')
    print('|---|---|---|---|---|---|---|')
    for problem in args.problems:
        reference, metadata = evaluation.shape_files(problem, args.small)
        base = None
        for label, path in evaluation.kernels(problem):
            result, timing = evaluation.latency_ms(reference, path, metadata, args.seeds, args.timing_only)
            if timing is None:
                print(f'| {problem} | {label} | {result.get("verdict")} | - | - | - | - |')
                continue
            ms = timing['latency_ms']
            base = base or ms
            roof = timing.get('roofline') or {}
            pct = f'{roof["percent_of_peak"]:.1f}' if roof else '-'
            print(f'| {problem} | {label} | {result["verdict"]} | {ms:.4f} | {base / ms:.3f} | {pct} | '
                  f'{roof.get("bound", "-")} |', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
