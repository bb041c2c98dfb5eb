#!/usr/bin/python3
"""Step B of the profiling protocol: execute a kernel's program (written by run_kernel.py --program-out) on
the problem's inputs, check it, and write the result JSON and the timing trace. Never imports kernel code.

usage: replay_check.py --problem REF.py --program PROGRAM [--metadata problem.yaml] [--seeds N] [--tolerance T]
                       [--timing-only] [--trace-out FILE] [--result-out FILE] [--input-specs-out fd:N]
                       [--fresh-seed N]
Exit status 0 whenever a result JSON was written (the verdict is in the JSON); see README.md for the schema.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import nki_sim  # noqa: E402

nki_sim.tune_allocator()

from protocol.command_line import add_evaluation_arguments, add_fresh_seed_argument, descriptor, \
    path_or_descriptor, report  # noqa: E402
from protocol.replay import replay_check  # noqa: E402
from nki_sim.target import set_target  # noqa: E402


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--problem', required=True, help='numpy reference module (REF.py)')
    parser.add_argument('--program', required=True, type=path_or_descriptor,
                        help='the program step A writes (a path, or fd:N: an open descriptor, read as it arrives)')
    add_evaluation_arguments(parser)
    add_fresh_seed_argument(parser)
    parser.add_argument('--kernel-source', help='the kernel\'s text, read only to quote its lines in messages')
    parser.add_argument('--ban-low-precision', action='store_true',
                        help='refuse a program that uses a format below float32: fp16, bf16, tf32, fp8 (as '
                             'step A refuses a kernel that names one)')
    parser.add_argument('--input-specs-out', type=descriptor,
                        help='fd:N: send the first inputs\' shapes to step A through this pipe, once built '
                             '(protocol/input_specs.py)')
    return parser.parse_args(argv)


def main(argv=None, retain=None):
    args = parse_arguments(argv)
    set_target(args.target)
    return report(lambda: replay_check(reference=args.problem, program=args.program, metadata=args.metadata,
                                       seeds=args.seeds, tolerance=args.tolerance, timing_only=args.timing_only,
                                       trace_out=args.trace_out, kernel_source=args.kernel_source,
                                       ban_low_precision=args.ban_low_precision,
                                       input_specs_out=args.input_specs_out, fresh_seed=args.fresh_seed,
                                       retain=retain),
                  args.result_out)


if __name__ == '__main__':
    # The result and the trace are written and closed when main returns. The replay (parsed program, the runs'
    # tensors, the trace) is kept and the process exits without freeing it object by object (about 0.5 s CPU for
    # an 85k-instruction kernel); this process never runs kernel code, so no exit hook of a kernel is skipped.
    retained: list = []
    status = main(retain=retained)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
