#!/usr/bin/python3
"""Profile one NKI kernel on real Trainium through the Neuron SDK (the `neuron` device backend).

usage: run_neuron.py --problem REF.py --kernel KERNEL.py [--metadata problem.yaml] [--seeds N] [--tolerance T]
                     [--ban-low-precision] --ntff-dir DIR --neff-out FILE --result-out FILE
                     [--timing-round-only] [--warmups 2] [--timed-runs 10]

The reference protocol (AccelOpt's NKIKernel.profile): correctness with `nki.baremetal` on the seeds
0, 21, 42, 63, 84 (relative L2 error in float64 under the tolerance), a run on fresh inputs that saves the NEFF
and is also checked, then `--warmups` unprofiled runs and `--timed-runs` runs that each save an NTFF trace in
DIR. The worker reads every trace with `neuron-profile view` and applies the variance retry, calling this
script again with --timing-round-only (no correctness checks) for further rounds.
Writes the same result JSON as run_kernel.py (verdict, message, line, seeds_checked, max_rel_l2, problem, ...).

This path needs neuronxcc and a NeuronCore; it is not exercised in this project's CI (no Trainium there):
the worker's side of the protocol is tested with a recorded-format fake of this script and of neuron-profile.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from protocol.comparison import compare  # noqa: E402
from protocol.evaluation import CHECK_SEEDS, note_rel_l2, secret_fresh_seed  # noqa: E402
from protocol.kernel_source import KernelRejected, KernelSource  # noqa: E402
from protocol.problem import ProblemError, load_problem  # noqa: E402

COMPILE_OPTIONS = '--disable-dge --logical-nc-config=1'


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--problem', required=True)
    parser.add_argument('--kernel', required=True)
    parser.add_argument('--metadata')
    parser.add_argument('--seeds', type=int, default=5)
    parser.add_argument('--tolerance', type=float)
    parser.add_argument('--ban-low-precision', action='store_true')
    parser.add_argument('--timing-only', action='store_true', help='accepted for symmetry; no timing without runs')
    parser.add_argument('--ntff-dir', required=True)
    parser.add_argument('--neff-out', required=True)
    parser.add_argument('--result-out', required=True)
    parser.add_argument('--timing-round-only', action='store_true')
    parser.add_argument('--warmups', type=int, default=2)
    parser.add_argument('--timed-runs', type=int, default=10)
    return parser.parse_args(argv)


class Failed(Exception):
    def __init__(self, verdict, message, line=0):
        super().__init__(message)
        self.verdict, self.message, self.line = verdict, message, line


def main(argv=None):
    args = parse_arguments(argv)
    start = time.monotonic()
    result = {'verdict': 'OK', 'message': '', 'line': 0, 'seeds_checked': 0, 'max_rel_l2': None,
              'instructions': None, 'trace': None, 'problem': None, 'wall_seconds': 0.0, 'fresh_seed': None,
              'fresh_rel_l2': None}
    try:
        import neuronxcc.nki as nki  # the real SDK: no simulator shim on this path
    except ImportError as error:
        result.update(verdict='INFRA_ERROR', message=f'the Neuron SDK is not installed: {error}')
        return finish(args, result, start)
    kernel = KernelSource(args.kernel)
    try:
        problem = load_problem(args.problem, args.metadata)
        result['problem'] = problem.summary(args.tolerance)
        tolerance = args.tolerance or problem.tolerance
        widen = not args.tolerance and not problem.tolerance_set
        if args.ban_low_precision:
            kernel.check_low_precision()
        entry = kernel.load_entry_point()

        def run(inputs, **save):
            try:
                return nki.baremetal(entry, additional_compile_opt=COMPILE_OPTIONS, **save)(*inputs)
            except Exception as error:  # compile and run failures are not told apart by the SDK
                message, line = kernel.describe(error)
                raise Failed('RUNTIME_ERROR', message, line) from error

        def check(seed, fresh=False, **save):
            np.random.seed(seed)
            inputs = problem.module.get_inputs()
            nki_inputs = device_inputs(problem, problem.module.transform_to_nki_inputs(inputs), nki.language)
            outputs = run(nki_inputs, **save)
            comparison = compare(outputs, problem.module.forward(*inputs), problem.module.transform_nki_outputs,
                                 tolerance, widen=widen)
            if not comparison.ok:
                raise Failed('INCORRECT', f'seed {seed}: {comparison.message}')
            note_rel_l2(result, comparison.rel_l2, fresh)
            return nki_inputs

        if not args.timing_round_only:
            for seed in CHECK_SEEDS[:max(0, args.seeds)]:
                check(seed)
                result['seeds_checked'] += 1
        result['fresh_seed'] = fresh_seed = secret_fresh_seed()
        timed_inputs = check(fresh_seed, fresh=True, save_neff_name=args.neff_out)
        os.makedirs(args.ntff_dir, exist_ok=True)
        for _ in range(args.warmups):
            run(timed_inputs)
        for i in range(args.timed_runs):
            run(timed_inputs, save_trace_name=os.path.join(args.ntff_dir, f'run_{i:02d}.ntff'))
    except KernelRejected as error:
        result.update(verdict='COMPILE_ERROR', message=error.message, line=error.line)
    except ProblemError as error:
        result.update(verdict='PROBLEM_ERROR', message=f'problem: {error}')
    except Failed as failure:
        result.update(verdict=failure.verdict, message=failure.message, line=failure.line)
    except MemoryError:
        result.update(verdict='OUT_OF_MEMORY', message='the host ran out of memory')
    return finish(args, result, start)


def device_inputs(problem, nki_inputs, language):
    """The kernel's inputs in the formats the problem declares (problem.yaml nki_input_dtypes), as the simulator
    gives them: each declared array rounded onto its format's grid (in place where it is float32, so `forward` sees
    the kernel's values) and cast to the SDK's numpy type of that format (`language.float8_e4m3`, ...); tfloat32
    stays a float32 array of rounded values (it has float32's size). Other values pass unchanged."""
    arrays, formats = problem.kernel_arrays(nki_inputs)
    typed = iter([a if f is None or f.name == 'tfloat32' else a.astype(getattr(language, f.name))
                  for a, f in zip(arrays, formats)])
    return [next(typed) if isinstance(value, np.ndarray) else value for value in nki_inputs]


def finish(args, result, start):
    result['wall_seconds'] = time.monotonic() - start
    with open(args.result_out, 'w') as f:
        f.write(json.dumps(result) + '\n')
    print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
