#!/usr/bin/python3
"""Step B of the profiling protocol: execute a kernel's program (written by run_kernel.py --program-out) on
the problem's inputs, check it, and write the result JSON and the timing trace. Never imports kernel code.

usage: replay_check.py --problem REF.py --program PROGRAM [--metadata problem.yaml] [--seeds N] [--tolerance T]
                       [--timing-only] [--trace-out FILE] [--result-out FILE]
Exit status 0 whenever a result JSON was written (the verdict is in the JSON); see README.md for the schema.
"""
import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import nki_sim  # noqa: E402

nki_sim.tune_allocator()

from protocol.evaluation import empty_result  # noqa: E402
from protocol.replay import replay_check  # noqa: E402


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--problem', required=True, help='numpy reference module (REF.py)')
    parser.add_argument('--program', required=True, help='the program step A wrote')
    parser.add_argument('--metadata', help='problem.yaml (default: beside the reference)')
    parser.add_argument('--seeds', type=int, default=5, help='correctness seeds to check (default 5)')
    parser.add_argument('--tolerance', type=float, help='relative L2 tolerance (default: problem.yaml or 2e-5)')
    parser.add_argument('--timing-only', action='store_true', help='trace on shapes only, no numerics')
    parser.add_argument('--trace-out', help='write the instruction trace here')
    parser.add_argument('--result-out', help='write the result JSON here (it is always printed too)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    try:
        result = replay_check(reference=args.problem, program=args.program, metadata=args.metadata,
                              seeds=args.seeds, tolerance=args.tolerance, timing_only=args.timing_only,
                              trace_out=args.trace_out)
    except Exception as error:
        last = traceback.extract_tb(error.__traceback__)[-1]
        result = empty_result()
        result.update(verdict='INFRA_ERROR', message=f'harness failure: {type(error).__name__}: {error} '
                                                     f'({os.path.basename(last.filename)}:{last.lineno})')
    text = json.dumps(result)
    if args.result_out:
        with open(args.result_out, 'w') as f:
            f.write(text + '\n')
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
