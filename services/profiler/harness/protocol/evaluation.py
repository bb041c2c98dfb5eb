"""The profiling protocol (reference: AccelOpt's NKIKernel.profile, improved).

1. Load the problem (failures: INFRA_ERROR) and the kernel (syntax/import/policy failures: COMPILE_ERROR).
2. Trace pass: run the kernel in timing-only mode on the first seed's input shapes. This catches compile
   errors quickly and yields the liveness plan that lets numerics runs free dead on-chip blocks early.
3. Correctness: for each seed in [0, 21, 42, 63, 84][:N], reseed numpy, build inputs, run the reference and the
   kernel, compare (comparison.compare). Stop at the first failure.
4. Final run on fresh inputs (seed 105, not a checked seed), traced and also checked, so a kernel that caches
   results or returns constants fails. Its trace is the one written.
In timing-only mode only step 2 runs and its trace is written.
Verdicts: OK, COMPILE_ERROR, RUNTIME_ERROR, INCORRECT, OUT_OF_MEMORY, INFRA_ERROR.
"""
import time

import numpy as np

from nki_sim.errors import CompileError, StaleOutputError
from nki_sim.jit import simulate

from .comparison import compare
from .kernel_source import KernelRejected, KernelSource
from .problem import ProblemError, load_problem

CHECK_SEEDS = (0, 21, 42, 63, 84)
FRESH_SEED = 105


class Verdict(Exception):
    """Ends the protocol with a verdict other than OK."""

    def __init__(self, verdict, message, line=0):
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.line = line


class Evaluation:
    def __init__(self, reference, kernel, metadata=None, seeds=5, tolerance=None, timing_only=False,
                 ban_low_precision=False, trace_out=None):
        self.reference = reference
        self.kernel = KernelSource(kernel)
        self.metadata = metadata
        self.seeds = CHECK_SEEDS[:max(0, seeds)]
        self.tolerance = tolerance
        self.timing_only = timing_only
        self.ban_low_precision = ban_low_precision
        self.trace_out = trace_out
        self.problem = None
        self.entry = None
        self.result = {'verdict': 'OK', 'message': '', 'line': 0, 'seeds_checked': 0, 'max_rel_l2': None,
                       'instructions': None, 'trace': None, 'problem': None, 'wall_seconds': 0.0,
                       'trace_seconds': None, 'trace_cpu_seconds': None}

    def run(self):
        start = time.monotonic()
        try:
            self._protocol()
        except Verdict as verdict:
            self.result.update(verdict=verdict.verdict, message=verdict.message, line=verdict.line)
        self.result['wall_seconds'] = round(time.monotonic() - start, 3)
        return self.result

    # ----- steps -----
    def _protocol(self):
        try:
            self.problem = load_problem(self.reference, self.metadata)
        except ProblemError as error:
            raise Verdict('INFRA_ERROR', f'problem: {error}') from error
        if self.tolerance is None:
            self.tolerance = self.problem.tolerance
        self.result['problem'] = self.problem.summary(self.tolerance)
        try:
            if self.ban_low_precision:
                self.kernel.check_low_precision()
            self.entry = self.kernel.load_entry_point()
        except KernelRejected as rejected:
            raise Verdict('COMPILE_ERROR', rejected.message, rejected.line) from rejected
        first_seed = self.seeds[0] if self.seeds else FRESH_SEED
        inputs, nki_inputs = self._inputs(first_seed)
        began, began_cpu = time.monotonic(), time.process_time()
        _, recorder = self._simulate(nki_inputs, timing_only=True)
        self.result['trace_seconds'] = round(time.monotonic() - began, 3)
        self.result['trace_cpu_seconds'] = round(time.process_time() - began_cpu, 3)
        self.result['instructions'] = recorder.count
        if not self.timing_only:
            plan = recorder.liveness_plan()
            for seed in self.seeds:
                if seed != first_seed:
                    inputs, nki_inputs = self._inputs(seed)
                self._check(seed, inputs, nki_inputs, plan)
                self.result['seeds_checked'] += 1
            if first_seed != FRESH_SEED:
                inputs, nki_inputs = self._inputs(FRESH_SEED)
            recorder = self._check(FRESH_SEED, inputs, nki_inputs, plan, fresh=True)
        if self.trace_out:
            recorder.write(self.trace_out)
            self.result['trace'] = self.trace_out

    def _inputs(self, seed):
        module = self.problem.module
        try:
            np.random.seed(seed)
            inputs = module.get_inputs()
            return inputs, module.transform_to_nki_inputs(inputs)
        except MemoryError as error:
            raise Verdict('OUT_OF_MEMORY', f'building the inputs (seed {seed}) ran out of memory') from error
        except Exception as error:
            raise Verdict('INFRA_ERROR', f'problem: get_inputs/transform_to_nki_inputs failed (seed {seed}): '
                                         f'{type(error).__name__}: {error}') from error

    def _reference(self, seed, inputs):
        try:
            return self.problem.module.forward(*inputs)
        except MemoryError as error:
            raise Verdict('OUT_OF_MEMORY', f'the reference ran out of memory (seed {seed})') from error
        except Exception as error:
            raise Verdict('INFRA_ERROR', f'problem: forward failed (seed {seed}): {type(error).__name__}: '
                                         f'{error}') from error

    def _simulate(self, nki_inputs, timing_only, plan=None):
        try:
            return simulate(self.entry, nki_inputs, timing_only=timing_only, free_plan=plan)
        except StaleOutputError as error:
            raise Verdict('INCORRECT', str(error)) from error
        except Exception as error:
            message, line = self.kernel.describe(error)
            verdict = 'COMPILE_ERROR' if isinstance(error, CompileError) else \
                'OUT_OF_MEMORY' if isinstance(error, MemoryError) else 'RUNTIME_ERROR'
            raise Verdict(verdict, message, line) from error

    def _check(self, seed, inputs, nki_inputs, plan, fresh=False):
        reference = self._reference(seed, inputs)
        outputs, recorder = self._simulate(nki_inputs, timing_only=False, plan=plan)
        try:
            comparison = compare(outputs, reference, self.problem.module.transform_nki_outputs, self.tolerance)
        except MemoryError as error:
            raise Verdict('OUT_OF_MEMORY', 'comparing the outputs ran out of memory') from error
        if comparison.rel_l2 is not None:
            previous = self.result['max_rel_l2']
            self.result['max_rel_l2'] = comparison.rel_l2 if previous is None else max(previous, comparison.rel_l2)
        if not comparison.ok:
            which = f'fresh inputs (seed {seed}) of the final traced run' if fresh else f'seed {seed}'
            raise Verdict('INCORRECT', f'{which}: {comparison.message}')
        return recorder


def evaluate(**options):
    return Evaluation(**options).run()
