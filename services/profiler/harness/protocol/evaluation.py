"""The profiling protocol (reference: AccelOpt's NKIKernel.profile, improved), in two processes.

Step A (run_kernel.py --program-out, protocol/recording.py), where the kernel runs: the kernel is loaded
(syntax/import/policy failures: COMPILE_ERROR) and run once on input shapes only; its nl/nisa call stream is
written as a program.
Step B (replay_check.py, protocol/replay.py), a trusted process that never imports kernel code: executes the
program on each seed's inputs, checks coverage and numerics against the reference, and writes the result and the
timing trace of the program it executed. See docs/adr/0009-trusted-replay.md.

`evaluate` runs both steps as child processes at the same time, connected by a pipe (the local, unsandboxed form
of what the C++ profiler does with two sandboxes). Verdicts: OK, COMPILE_ERROR, RUNTIME_ERROR, INCORRECT,
OUT_OF_MEMORY, PROBLEM_ERROR, INFRA_ERROR.
"""
import fcntl
import json
import os
import secrets
import subprocess
import sys
import tempfile

CHECK_SEEDS = (0, 21, 42, 63, 84)
def note_rel_l2(result, rel_l2, fresh):
    """Records a compared run's error in `result`: the fresh run's as `fresh_rel_l2`; `max_rel_l2` over the check
    seeds (and the fresh run when no seed was checked), the errors measured at the tolerance."""
    if fresh:
        result['fresh_rel_l2'] = rel_l2
    if rel_l2 is not None and (not fresh or not result['seeds_checked']):
        previous = result['max_rel_l2']
        result['max_rel_l2'] = rel_l2 if previous is None else max(previous, rel_l2)


def secret_fresh_seed():
    """The seed of the final run's fresh inputs: drawn per profile from the operating system's randomness by the
    checking process and never told to the kernel, so answers a kernel embeds for known seeds cannot match it
    (docs/adr/0009-trusted-replay.md). Never one of the check seeds."""
    while True:
        seed = secrets.randbelow(2 ** 32)
        if seed not in CHECK_SEEDS:
            return seed


KERNEL_VERDICTS = ('COMPILE_ERROR', 'RUNTIME_ERROR', 'INCORRECT', 'OUT_OF_MEMORY')
HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The program pipe's buffer: step A writes on while step B executes a batch of steps (the default 64 KiB holds
# about 500 program lines; step B reads them in batches of over a thousand, so with it step A would wait)
PROGRAM_PIPE_BYTES = 1 << 20


class Verdict(Exception):
    """Ends the protocol with a verdict other than OK."""

    def __init__(self, verdict, message, line=0):
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.line = line


def empty_result():
    return {'verdict': 'OK', 'message': '', 'line': 0, 'seeds_checked': 0, 'max_rel_l2': None,
            'instructions': None, 'trace': None, 'problem': None, 'wall_seconds': 0.0,
            'trace_seconds': None, 'trace_cpu_seconds': None, 'output_bytes': None, 'fresh_seed': None,
            'fresh_rel_l2': None}


def evaluate(reference, kernel, metadata=None, seeds=5, tolerance=None, timing_only=False,
             ban_low_precision=False, trace_out=None, python=sys.executable, target='trn1', fresh_seed=None):
    """Step A and step B as two child processes at the same time, the program passing through a pipe (step B
    replays it as it arrives, and sends step A the inputs' shapes through another); returns step B's result. Step A
    is stopped once step B has finished."""
    reference, kernel = os.path.abspath(reference), os.path.abspath(kernel)
    metadata = os.path.abspath(metadata) if metadata else None
    trace_out = os.path.abspath(trace_out) if trace_out else None
    with tempfile.TemporaryDirectory(prefix='accelopt-protocol-') as work:
        result_path = os.path.join(work, 'result.json')
        common = ['--problem', reference, '--target', target] + (['--metadata', metadata] if metadata else [])
        program_in, program_out = os.pipe()
        fcntl.fcntl(program_out, fcntl.F_SETPIPE_SZ, PROGRAM_PIPE_BYTES)
        specs_in, specs_out = os.pipe()     # step B -> step A: the inputs' shapes (protocol/input_specs.py)
        step_a = [python, os.path.join(HARNESS, 'run_kernel.py'), '--kernel', kernel,
                  '--program-out', f'fd:{program_out}', '--input-specs', f'fd:{specs_in}']
        if ban_low_precision:
            step_a.append('--ban-low-precision')
        step_b = [python, os.path.join(HARNESS, 'replay_check.py'), '--program', f'fd:{program_in}',
                  '--input-specs-out', f'fd:{specs_out}',
                  '--seeds', str(seeds), '--result-out', result_path, '--kernel-source', kernel] + common
        if ban_low_precision:
            step_b.append('--ban-low-precision')
        if tolerance is not None:
            step_b += ['--tolerance', repr(tolerance)]
        if timing_only:
            step_b.append('--timing-only')
        if trace_out:
            step_b += ['--trace-out', trace_out]
        if fresh_seed is not None:
            step_b += ['--fresh-seed', str(fresh_seed)]
        try:
            recording = subprocess.Popen(step_a + common, cwd=work, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, pass_fds=(program_out, specs_in))
        finally:
            os.close(program_out)
            os.close(specs_in)
        try:
            done = subprocess.run(step_b, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False,
                                  pass_fds=(program_in, specs_out))
        finally:
            os.close(program_in)
            os.close(specs_out)
            recording.kill()
            recording.wait()
        try:
            with open(result_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            result = empty_result()
            result.update(verdict='INFRA_ERROR', message=f'replay_check.py wrote no result (exit {done.returncode}):'
                                                          f' {done.stderr.strip()[-500:]}')
            return result
