#!/usr/bin/python3
"""Profile one NKI kernel against an NKIBench-style problem on the simulator; print and write one JSON result.

usage: run_kernel.py --problem REF.py --kernel KERNEL.py [--metadata problem.yaml] [--seeds N] [--tolerance T]
                     [--timing-only] [--ban-low-precision] [--trace-out FILE] [--result-out FILE]
                     [--fresh-seed N]
       run_kernel.py --problem REF.py --kernel KERNEL.py --program-out PROGRAM [--metadata ..] [--ban-low-precision]
                     [--input-specs fd:N]
The first form runs both protocol steps as child processes (step A: this script with --program-out, the only
process that runs kernel code; step B: replay_check.py). Exit status 0 whenever a result JSON (first form) or a
program (second form) was written; see README.md for the schema.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import nki_sim  # noqa: E402

nki_sim.install_import_shim()
nki_sim.tune_allocator()

from protocol.command_line import add_evaluation_arguments, add_fresh_seed_argument, descriptor, \
    path_or_descriptor, report  # noqa: E402
from protocol.evaluation import evaluate  # noqa: E402
from protocol.recording import record  # noqa: E402
from nki_sim.target import set_target  # noqa: E402


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--problem', required=True, help='numpy reference module (REF.py)')
    parser.add_argument('--kernel', required=True, help='NKI kernel module defining kernel or optimized_kernel')
    add_evaluation_arguments(parser)
    add_fresh_seed_argument(parser)
    parser.add_argument('--ban-low-precision', action='store_true',
                        help='reject kernels that use fp16, bf16, tf32 or fp8')
    parser.add_argument('--program-out', type=path_or_descriptor,
                        help='step A only: record the kernel\'s program here (a path, or fd:N: an open descriptor)')
    parser.add_argument('--input-specs', type=descriptor,
                        help='step A: fd:N, a pipe from step B carrying the inputs\' shapes (else step A builds '
                             'the inputs to read their shapes)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    if args.program_out is not None:
        if args.fresh_seed is not None:
            print('run_kernel.py: --fresh-seed is for the checking step; step A (--program-out) never sees inputs',
                  file=sys.stderr)
            return 2
        set_target(args.target)
        record(args.problem, args.kernel, args.program_out, args.metadata, args.ban_low_precision,
               args.input_specs)
        return 0
    return report(lambda: evaluate(reference=args.problem, kernel=args.kernel, metadata=args.metadata,
                                   seeds=args.seeds, tolerance=args.tolerance, timing_only=args.timing_only,
                                   ban_low_precision=args.ban_low_precision, trace_out=args.trace_out,
                                   target=args.target, fresh_seed=args.fresh_seed),
                  args.result_out)


if __name__ == '__main__':
    sys.exit(main())
