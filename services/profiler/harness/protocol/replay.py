"""Step B of the protocol, in a trusted process that never imports or runs kernel code.

Reads the program step A wrote, builds the inputs from the problem's reference for each seed, executes the
program on them through the simulator, checks that every output element was written by an instruction,
compares with the reference, and writes the timing trace of the final run (fresh seed) and the result. The
numbers that are timed are the numbers that are checked.

1. Load the problem (PROBLEM_ERROR) and parse the program (malformed: RUNTIME_ERROR; a step-A failure entry
   becomes its verdict, never OK).
2. Timing pass: the program in timing-only mode on the first seed's input shapes (instruction count, liveness
   plan for the numerics runs).
3. Correctness: for each seed in [0, 21, 42, 63, 84][:N]: inputs, reference, replay, coverage, comparison.
4. Final run on fresh inputs, also checked (at 10x the tolerance after the check seeds, which measure accuracy;
   these catch a kernel fitted to known inputs); its trace is the one written. Their seed is drawn per profile
   (secret_fresh_seed) and never told to step A; the result names it (`fresh_seed`) so a failure can be
   reproduced with --fresh-seed.
"""
import ast
import gc
import os
import time

import numpy as np

from nki_sim.dtypes import AlternateFill
from nki_sim.errors import CompileError, StaleOutputError, WrongOnDeviceError
from nki_sim.program import LOW_PRECISION_FORMATS, ProgramError, RecordedFailure, Replay, read_program

from . import input_specs, static_rules
from .comparison import compare
from .evaluation import CHECK_SEEDS, KERNEL_VERDICTS, Verdict, empty_result, note_rel_l2, \
    secret_fresh_seed
from .problem import ProblemError, load_problem

PRIVATE_OUTPUT = (' (it is in per-program HBM, nl.hbm or nl.private_hbm, of which each program of the launch has its '
                  'own copy, and one copy is returned; an output that every program writes a part of is declared in '
                  'nl.shared_hbm)')
# Every run keeps its tensors, views and allocations (and the trace its lines) to the end, so the default
# collector thresholds traverse an ever larger heap (a sixth of gqa_full's trace pass). Collect less often.
REPLAY_GC_THRESHOLDS = (100_000, 20, 100)


class ReplayCheck:
    def __init__(self, reference, program, metadata=None, seeds=5, tolerance=None, timing_only=False,
                 trace_out=None, kernel_source=None, ban_low_precision=False, input_specs_out=None,
                 fresh_seed=None):
        self.reference = reference
        self.program_path = program
        self.metadata = metadata
        self.seeds = CHECK_SEEDS[:max(0, seeds)]
        self.fresh_seed = secret_fresh_seed() if fresh_seed is None else fresh_seed
        self.tolerance = tolerance
        self.widen = False
        self.timing_only = timing_only
        self.trace_out = trace_out
        self.kernel_source = kernel_source
        self.banned_formats = LOW_PRECISION_FORMATS if ban_low_precision else frozenset()
        # a pipe to step A: the first inputs' shapes are sent there once built (protocol/input_specs.py)
        self.input_specs_out = input_specs_out
        self.problem = None
        self.replay = None
        self.recorder = None
        self.result = empty_result()

    def run(self):
        start = time.monotonic()
        try:
            self._protocol()
        except Verdict as verdict:
            self.result.update(verdict=verdict.verdict, message=verdict.message, line=verdict.line)
        finally:
            if self.input_specs_out is not None:     # never sent: step A waits for the line or its end
                os.close(self.input_specs_out)
                self.input_specs_out = None
        self.result['wall_seconds'] = round(time.monotonic() - start, 3)
        return self.result

    def _protocol(self):
        try:
            self.problem = load_problem(self.reference, self.metadata)
        except ProblemError as error:
            raise Verdict('PROBLEM_ERROR', f'problem: {error}') from error
        self.widen = self.tolerance is None and not self.problem.tolerance_set
        if self.tolerance is None:
            self.tolerance = self.problem.tolerance
        self.result['problem'] = self.problem.summary(self.tolerance)
        gc.set_threshold(*REPLAY_GC_THRESHOLDS)
        first_seed = self.seeds[0] if self.seeds else self.fresh_seed
        inputs, arrays, formats = self._inputs(first_seed)
        try:
            program_file = open(self.program_path)
        except OSError as error:
            raise Verdict('RUNTIME_ERROR', f'the kernel produced no program: {error.strerror}') from error
        with program_file:
            # The timing pass reads and compiles the program as it arrives (step A may still be writing it). The
            # program is millions of small objects that live to the end: keep the cyclic collector from
            # traversing them again and again while they are built (and afterwards).
            began, began_cpu = time.monotonic(), time.process_time()
            gc.disable()
            try:
                self.replay = self._read(lambda: Replay(read_program(program_file), self.banned_formats))
                _, recorder, _ = self._execute(arrays, formats, timing_only=True)
            finally:
                gc.freeze()
                gc.enable()
            self.result['trace_seconds'] = round(time.monotonic() - began, 3)
            self.result['trace_cpu_seconds'] = round(time.process_time() - began_cpu, 3)
        self.result['instructions'] = recorder.count
        if not self.timing_only:
            plan = recorder.liveness_plan()
            for seed in self.seeds:
                if seed != first_seed:
                    inputs, arrays, formats = self._inputs(seed)
                self._check(seed, inputs, arrays, formats, plan)
                self.result['seeds_checked'] += 1
            self.result['fresh_seed'] = self.fresh_seed
            if first_seed != self.fresh_seed:
                inputs, arrays, formats = self._inputs(self.fresh_seed)
            recorder, outputs, never_written = self._check(self.fresh_seed, inputs, arrays, formats, plan,
                                                           fresh=True)
            self._check_no_stale_reads(self.fresh_seed, plan, outputs, never_written)
        self.recorder = recorder
        if self.trace_out:
            recorder.write(self.trace_out)
            self.result['trace'] = self.trace_out

    @staticmethod
    def _read(action):
        """`action()`, which reads the program, with its reading failures as verdicts."""
        try:
            return action()
        except RecordedFailure as failure:
            raise _recorded_failure(failure.entry) from None
        except (ProgramError, UnicodeDecodeError) as error:
            raise Verdict('RUNTIME_ERROR', f'malformed program: {error}') from error
        except MemoryError as error:
            raise Verdict('OUT_OF_MEMORY', 'reading the program ran out of memory') from error

    def _inputs(self, seed):
        """(the reference's inputs, the kernel's input arrays, their NKI formats). The formats come from the
        problem's declaration (problem.yaml nki_input_dtypes), never from the program: the program's input
        declarations are only checked against them."""
        module = self.problem.module
        try:
            np.random.seed(seed)
            inputs = module.get_inputs()
            nki_inputs = module.transform_to_nki_inputs(inputs)
        except MemoryError as error:
            raise Verdict('OUT_OF_MEMORY', f'building the inputs (seed {seed}) ran out of memory') from error
        except Exception as error:
            raise Verdict('PROBLEM_ERROR', f'problem: get_inputs/transform_to_nki_inputs failed (seed {seed}): '
                                         f'{type(error).__name__}: {error}') from error
        try:
            arrays, formats = self.problem.kernel_arrays(nki_inputs)
        except ProblemError as error:
            raise Verdict('PROBLEM_ERROR', f'problem: {error}') from error
        if self.input_specs_out is not None:
            descriptor, self.input_specs_out = self.input_specs_out, None
            input_specs.send(descriptor, input_specs.encode(nki_inputs, arrays, formats))
        return inputs, arrays, formats

    def _reference(self, seed, inputs):
        try:
            return self.problem.module.forward(*inputs)
        except MemoryError as error:
            raise Verdict('OUT_OF_MEMORY', f'the reference ran out of memory (seed {seed})') from error
        except Exception as error:
            raise Verdict('PROBLEM_ERROR', f'problem: forward failed (seed {seed}): {type(error).__name__}: '
                                         f'{error}') from error

    def _execute(self, arrays, formats, timing_only, plan=None):
        try:
            return self._read(lambda: self.replay.run(arrays, timing_only, plan, formats=formats))
        except Verdict:
            raise
        except StaleOutputError as error:
            raise Verdict('INCORRECT', str(error)) from error
        except Exception as error:
            line = getattr(error, 'line', 0) or self.replay.run_state.fixed_line or 0
            detail = error.message if isinstance(error, CompileError) else f'{type(error).__name__}: {error}'
            verdict = 'INCORRECT' if isinstance(error, WrongOnDeviceError) else \
                'COMPILE_ERROR' if isinstance(error, CompileError) else \
                'OUT_OF_MEMORY' if isinstance(error, MemoryError) else 'RUNTIME_ERROR'
            source = self._source_line(line)
            name = self.replay.program.kernel_name    # the file name step A loaded and quotes (kernel.py in the worker)
            where = f'{name}:{line}: {source}\n' if source else f'{name}:{line}: '
            raise Verdict(verdict, where + detail, line) from error

    def _unrun_launch(self):
        """A note for outputs left unwritten: the grid launches the kernel file makes only in its `__main__` block
        (static_rules.main_block_launches) when the loader could not take one of them as the launch to run (not one,
        or not of literal ints), so that its kernel ran as one program."""
        if self.kernel_source is None:
            return ''
        try:    # the text step A loaded, read here for a message only: any failure to read it drops the note
            with open(self.kernel_source, errors='replace') as f:
                tree = ast.parse(f.read())
            adopted = static_rules.adopted_main_launch(tree)
            launches = [text for _, text, _ in static_rules.main_block_launches(tree)]
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return ''
        if adopted is not None or not launches:
            return ''
        return (f' (the file launches {" or ".join(launches)} only in its __main__ block, which the simulator does '
                'not run, so its kernel ran as one program: name the launch as the entry point with '
                f'`kernel = {launches[0]}`)')

    def _source_line(self, line):
        """The kernel's source line `line` when its text was given (read as text for messages only, never run;
        the message then reads as step A's: 'kernel.py:LINE: <source>' and the detail on the next line)."""
        if self.kernel_source is None or line <= 0:
            return ''
        try:
            with open(self.kernel_source, errors='replace') as f:
                for number, text in enumerate(f, 1):
                    if number == line:
                        return text.strip()
        except OSError:
            pass
        return ''

    def _check(self, seed, inputs, arrays, formats, plan, fresh=False):
        reference = self._reference(seed, inputs)
        outputs, recorder, never_written = self._execute(arrays, formats, timing_only=False, plan=plan)
        which = f'fresh inputs (seed {seed}) of the final traced run' if fresh else f'seed {seed}'
        unwritten = self._compared(outputs, reference, never_written)
        if unwritten:
            detail = '; '.join(f'output {index}: {count} element(s) never written by any instruction'
                               + (PRIVATE_OUTPUT if index in self.replay.private_outputs else '')
                               for index, count, _ in unwritten)
            raise Verdict('INCORRECT', f'{which}: {detail}{self._unrun_launch()}')
        # The fresh run is one more seed, a secret one, held to the same tolerance: a limit that followed the check
        # errors let a kernel patched for the public check seeds, just under the tolerance there, be several times
        # the tolerance off on every other input.
        try:
            comparison = compare(outputs, reference, self.problem.module.transform_nki_outputs, self.tolerance,
                                 widen=self.widen)
        except MemoryError as error:
            raise Verdict('OUT_OF_MEMORY', 'comparing the outputs ran out of memory') from error
        note_rel_l2(self.result, comparison.rel_l2, fresh)
        if not comparison.ok:
            raise Verdict('INCORRECT', f'{which}: {comparison.message}')
        self.result['output_bytes'] = self.replay.output_bytes
        return recorder, outputs, never_written

    def _check_no_stale_reads(self, seed, plan, outputs, never_written_outputs):
        """Runs the fresh inputs once more with other values in memory no instruction wrote (AlternateFill): the
        outputs must be the same, element for element, wherever the kernel wrote them. A comparison, a min or max,
        a select or a mask computed from such memory hides the usual fill (NaN, a large integer pattern, True) and
        gives a clean result the device, whose memory holds what was there before, does not."""
        # copies: the next run may reuse the memory the outputs live in
        first = [np.array(a, copy=True) for a in (outputs if isinstance(outputs, (tuple, list)) else [outputs])]
        _, arrays, formats = self._inputs(seed)
        with AlternateFill():
            again, _, _ = self._execute(arrays, formats, timing_only=False, plan=plan)
        second = list(again) if isinstance(again, (tuple, list)) else [again]
        never_written = {index: mask for index, _, mask in never_written_outputs}
        for index, (a, b) in enumerate(zip(first, second)):
            a, b = np.asarray(a), np.asarray(b)
            if a.shape != b.shape:
                continue
            written = ~never_written[index] if index in never_written else np.ones(a.shape, bool)
            differ = written & ~((a == b) | (_is_nan(a) & _is_nan(b)))
            if differ.any():
                raise Verdict('INCORRECT', f'output {index}: {int(differ.sum())} element(s) depend on on-chip memory '
                              'no instruction wrote (they change when that memory holds other values; on the device '
                              'it holds whatever was there before): initialize it (nl.zeros, memset) or do not read '
                              'it')

    def _compared(self, outputs, reference, unwritten):
        """The unwritten outputs whose unwritten elements reach the comparison. A kernel may leave elements
        undefined that the problem's transform_nki_outputs drops (padding rows a masked store skips, the overhang
        guard of an integer output): the outputs are passed through the transform twice more with those elements
        poisoned, NaN in a float output and in an integer or bool output its dtype's lowest value the first time and
        highest the second; if the two results are equal (NaN equal to NaN) and no NaN appears that the outputs with
        those elements cleared do not have, the elements were dropped. Any other output counts in full."""
        if not unwritten:
            return unwritten
        arrays = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        if not all(isinstance(a, np.ndarray) and a.dtype.kind in 'fiub' for a in arrays):
            return unwritten
        # the outputs as the kernel left them, with the unwritten elements (uninitialized memory: NaN or a bit
        # pattern, nki_sim/tensors.py) cleared, then with them poisoned twice
        cleared = [a.copy() for a in arrays]
        for index, _, mask in unwritten:
            cleared[index][mask] = 0
        cleared_outputs = tuple(cleared) if isinstance(outputs, (tuple, list)) else cleared[0]
        probes = []
        for extreme in (0, 1):
            poisoned = [a.copy() for a in arrays]
            for index, _, mask in unwritten:
                poisoned[index][mask] = _poison(poisoned[index].dtype, extreme)
            probes.append(tuple(poisoned) if isinstance(outputs, (tuple, list)) else poisoned[0])
        transform = self.problem.module.transform_nki_outputs
        try:
            with np.errstate(all='ignore'):
                real = _array_list(transform(cleared_outputs, reference))
                low, high = (_array_list(transform(probe, reference)) for probe in probes)
        except Exception:   # the comparison reports a failing transform; here it only means: count in full
            return unwritten
        if real is None or low is None or high is None or not len(real) == len(low) == len(high):
            return unwritten
        for r, p, q in zip(real, low, high):
            if not r.shape == p.shape == q.shape or p.dtype.kind != q.dtype.kind:
                return unwritten
            if p.dtype.kind == 'f':
                if np.any(np.isnan(p) & ~np.isnan(r)) or not np.array_equal(p, q, equal_nan=True):
                    return unwritten
            elif not np.array_equal(p, q):
                return unwritten
        return []


def _poison(dtype, extreme):
    """The value an unwritten element gets in a probe: NaN in a float array, else the dtype's lowest (extreme 0)
    or highest (1) value."""
    if dtype.kind == 'f':
        return np.nan
    if dtype.kind == 'b':
        return bool(extreme)
    limits = np.iinfo(dtype)
    return limits.max if extreme else limits.min


def _array_list(value):
    """The transformed outputs as a list of numeric arrays (float, integer or bool), or None otherwise."""
    items = value if isinstance(value, (tuple, list)) else [value]
    try:
        arrays = [np.asarray(v) for v in items]
    except Exception:
        return None
    return arrays if all(a.dtype.kind in 'fiub' for a in arrays) else None


def _recorded_failure(error):
    """The verdict of a step-A failure entry: only kernel verdicts, never OK (the entry is untrusted)."""
    verdict = error.get('verdict')
    message = error.get('message')
    line = error.get('line')
    if verdict not in KERNEL_VERDICTS:
        verdict = 'RUNTIME_ERROR'
    return Verdict(verdict, message if isinstance(message, str) else 'the kernel failed',
                   line if type(line) is int and line >= 0 else 0)


def replay_check(retain=None, **options):
    """Run the replay check; with `retain` (a list), the ReplayCheck (program, last run, trace) is appended to it
    instead of being freed on return (replay_check.py then exits without freeing it object by object)."""
    check = ReplayCheck(**options)
    if retain is not None:
        retain.append(check)
    return check.run()


def _is_nan(a):
    """NaN positions of an array (none for a non-float array)."""
    return np.isnan(a) if a.dtype.kind in 'fc' else np.zeros(a.shape, bool)
