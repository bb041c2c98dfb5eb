"""Step A of the protocol, in the kernel's sandbox: run the kernel on input shapes only and write its program.

The kernel never sees input data: inputs are shape-only tensors. Everything this process writes is untrusted;
step B (protocol/replay.py) executes the program it finds, so a forged or truncated program is only another
program. A kernel failure here (compile error, exception) is written into the program as an `error` entry,
which step B can only turn into a non-OK verdict.
"""
import gc
import json

import numpy as np

from nki_sim.errors import CompileError, StaleOutputError, WrongOnDeviceError
from nki_sim.jit import InputSpec, map_arguments
from nki_sim.program import Recorder, Recording, record_program

from . import input_specs
from .command_line import bounded
from .evaluation import CHECK_SEEDS
from .kernel_source import KernelRejected, KernelSource
from .problem import ProblemError, load_problem

RECORDING_GC_THRESHOLDS = (100_000, 20, 100)


def record(reference, kernel, program_out, metadata=None, ban_low_precision=False, input_specs_in=None):
    """Write the program of `kernel` on the problem's input shapes to `program_out`. With `input_specs_in` (a pipe
    from step B, protocol/input_specs.py) the shapes are the ones step B sends, read after the kernel is loaded;
    step A builds the inputs itself only when step B sends none."""
    # The recorder keeps every recorded tensor and view alive to the end, so the default collector thresholds
    # traverse an ever larger heap (a quarter of the CPU time of an 85k-instruction kernel). Collect less
    # often; cycles the kernel makes are still collected.
    gc.set_threshold(*RECORDING_GC_THRESHOLDS)
    with open(program_out, 'w') as out:
        recorder = Recorder(out)
        try:
            source = KernelSource(kernel)
            with Recording(recorder):
                if ban_low_precision:
                    source.check_low_precision()
                entry = source.load_entry_point()
                nki_inputs = input_specs.receive(input_specs_in) if input_specs_in is not None else None
                if nki_inputs is None:
                    nki_inputs = _input_shapes(reference, metadata)
                try:
                    record_program(entry, nki_inputs, recorder)
                except StaleOutputError as error:
                    _error(out, 'INCORRECT', str(error))
                except WrongOnDeviceError as error:
                    _error(out, 'INCORRECT', *source.describe(error))
                except Exception as error:
                    message, line = source.describe(error)
                    verdict = 'COMPILE_ERROR' if isinstance(error, CompileError) else \
                        'OUT_OF_MEMORY' if isinstance(error, MemoryError) else 'RUNTIME_ERROR'
                    _error(out, verdict, message, line)
        except KernelRejected as rejected:
            _error(out, 'COMPILE_ERROR', rejected.message, rejected.line)
        except (ProblemError, Exception) as error:
            _error(out, 'INFRA_ERROR', f'recording the program: {type(error).__name__}: {error}')


def _input_shapes(reference, metadata):
    """The problem's kernel inputs (first check seed); only their shapes and formats reach the kernel: each array
    becomes an InputSpec in the format the problem declares for it (problem.yaml nki_input_dtypes), else its own
    dtype. Other values (tile counts, flags) pass as they are."""
    problem = load_problem(reference, metadata)
    np.random.seed(CHECK_SEEDS[0])
    nki_inputs = problem.module.transform_to_nki_inputs(problem.module.get_inputs())
    arrays, formats = problem.kernel_arrays(nki_inputs)
    specs = iter([InputSpec(a.shape, a.dtype if f is None else f) for a, f in zip(arrays, formats)])
    return [map_arguments(lambda value: next(specs) if isinstance(value, np.ndarray) else value, item)
            for item in nki_inputs]


def _error(out, verdict, message, line=0):
    out.write(json.dumps({'error': {'verdict': verdict, 'message': bounded(message), 'line': line}}) + '\n')
