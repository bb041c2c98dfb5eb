"""Kernel entry points: nki.jit / nki.trace, SPMD launch grids, nki.baremetal / simulate_kernel / benchmark /
profile, and `simulate`, which runs one kernel invocation under a fresh Run and returns its outputs and trace.

Inputs: numpy arrays become HBM tensors (in timing-only mode only their shape and dtype are used; an
`InputSpec` can stand in for an array); other arguments (floats such as eps) pass through unchanged.
"""
import dis
import enum
import itertools
import os
import types
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import language, memory, runtime     # language: looked up at call time, recorded when recording
from .beta import uses_beta2
from .dtypes import LowPrecisionType
from .errors import CompileError, StaleOutputError
from .tensors import Tensor, hbm_tensor, shape_only_input
from .trace import TraceRecorder, Untraced


class InputSpec:
    """Shape and dtype of a kernel input, for timing-only runs without data; the dtype may be a format numpy lacks
    (nl.bfloat16, nl.float8_e4m3, ...)."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype if isinstance(dtype, LowPrecisionType) else np.dtype(dtype)


class Kernel:
    """A function decorated with @nki.jit; `kernel[g0, g1](...)` launches an SPMD grid. `simulation` is NKI's
    simulation mode (`@nki.jit(mode="simulation")`, `nki.simulate_kernel`), where a kernel may return tiles."""

    def __init__(self, func, grid=(), core_split=None, simulation=False):
        self.func = func
        self.grid = grid
        self.core_split = core_split  # (axis, cores) when a grid axis is spread over NeuronCores (nl.nc)
        self.simulation = simulation
        self.__name__ = getattr(func, '__name__', 'kernel')
        self.__doc__ = getattr(func, '__doc__', None)
        self.__wrapped__ = func

    def __getitem__(self, grid):
        grid = grid if isinstance(grid, tuple) else (grid,)
        spread = [(axis, getattr(g, 'cores', 1)) for axis, g in enumerate(grid) if getattr(g, 'cores', 1) > 1]
        if len(spread) > 1:
            raise CompileError('only one launch-grid axis can be spread over NeuronCores (nl.nc)')
        extents = tuple(int(g) for g in grid)
        if any(g < 1 for g in extents):
            raise CompileError(f'{self.__name__}[{", ".join(map(str, extents))}]: a launch grid has at least one '
                               'program on every axis (a grid of 0 programs runs nothing and returns nothing)')
        return Kernel(self.func, extents, spread[0] if spread else None, self.simulation)

    def with_schedule(self, edges: Any) -> 'Kernel':
        """NKI's scheduling API (the "How to use the NKI scheduling APIs" guide): `kernel.with_schedule([(name,
        name or [names]), ...])` adds dependency edges between instructions labelled with `name=` for the
        compiler's scheduler. Like `nl.no_reorder()`, an ordering hint: the simulator runs instructions in program
        order and the timing model does not take the edges; the pairs' form is checked and the same kernel is
        returned."""
        if not isinstance(edges, (list, tuple)):
            raise CompileError(f'{self.__name__}.with_schedule: the schedule is a list of (name, name or list of '
                               f'names) pairs, not {type(edges).__name__}')
        for edge in edges:
            later = edge[1] if isinstance(edge, (list, tuple)) and len(edge) == 2 else None
            earlier = later if isinstance(later, (list, tuple)) else [later]
            if later is None or not isinstance(edge[0], str) or not earlier or \
                    not all(isinstance(name, str) for name in earlier):
                raise CompileError(f'{self.__name__}.with_schedule: {edge!r} is not a (name, name or list of names) '
                                   'pair of instruction names')
        return Kernel(self.func, self.grid, self.core_split, self.simulation)

    def __call__(self, *args, **kwargs):
        run = runtime.RUN
        if run is None:
            outputs, _ = simulate(self, args, kwargs)
            return outputs
        if run.beta2:
            require_module_level_names(self.func)
        if not self.grid:
            return self.func(*args, **kwargs)
        return launch(run, self, args, kwargs)


def launch(run: runtime.Run, kernel: Kernel, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """`kernel[grid](...)` called inside a running kernel (a Python launcher): every program of the grid runs,
    in order, sharing its shared_hbm outputs; the value program 0 returned is the launch's value."""
    saved = run.program_ids, run.grid, run.shared_ordinal, run.core_split
    start = run.shared_ordinal
    run.grid = kernel.grid
    run.core_split = kernel.core_split
    returned = None
    try:
        for index, ids in enumerate(itertools.product(*[range(g) for g in kernel.grid])):
            run.enter_program(ids)
            run.shared_ordinal = start
            run.observer.program(ids, start, kernel.core_split)
            value = kernel.func(*args, **kwargs)
            if index == 0:
                returned = value
    except (IndexError, TypeError) as error:
        host = [str(i + 1) for i, a in enumerate(args) if isinstance(a, np.ndarray)] + \
            [name for name, a in kwargs.items() if isinstance(a, np.ndarray)]
        if not host:
            raise
        raise CompileError(
            f'{kernel.__name__}[{", ".join(map(str, kernel.grid))}]: argument {", ".join(host)} of the launch is a '
            'numpy array, not an HBM tensor: the function that launches the kernel runs here as the kernel itself, '
            'so an array its own host code makes (np.zeros(...)) is no device tensor; declare it with '
            'nl.ndarray(shape, dtype, buffer=nl.shared_hbm) and return it, or name the launched kernel as the entry '
            f'point ({type(error).__name__}: {error})') from error
    finally:
        ordinal = run.shared_ordinal
        run.program_ids, run.grid, _, run.core_split = saved
        run.enter_program(run.program_ids)
        run.shared_ordinal = ordinal
        run.observer.launch_end(run.program_ids, run.core_split)
    return returned


def _nki_module(value: Any) -> bool:
    name = getattr(value, '__name__', '') if isinstance(value, types.ModuleType) else ''
    return any(name == root or name.startswith(root + '.') for root in ('nki', 'nki_sim', 'neuronxcc'))


def require_module_level_names(func: Any) -> None:
    """A Beta 2 kernel names the NKI modules it uses (`nl`, `nisa`, `nki`) as globals of its module. NKI's jit
    "compiles a top-level NKI function" (the nki.jit page) and the NKI Compiler resolves a kernel's names against
    its module's globals, so a kernel defined inside a factory function that imports `nki.language as nl` there
    (a closure variable) does not compile on a device: a public kernel's author records "with a function-local
    import the first device compile died with \"failed to resolve name 'nl.load'\" (simulate, which interprets
    the python directly, was fine)". Such a closure variable is a COMPILE_ERROR naming it; other closure values and
    Beta 1 kernels (traced by Python) are not affected."""
    code = getattr(func, '__code__', None)
    if code is None or not func.__closure__:
        return
    bound = {name: cell for name, cell in zip(code.co_freevars, func.__closure__)}
    for name, cell in bound.items():
        try:
            value = cell.cell_contents
        except ValueError:          # a free variable not yet bound
            continue
        if not _nki_module(value):
            continue
        used = name
        instructions = list(dis.get_instructions(code))
        for first, second in zip(instructions, instructions[1:]):
            if first.opname == 'LOAD_DEREF' and first.argval == name and second.opname in ('LOAD_ATTR',
                                                                                         'LOAD_METHOD'):
                used = f'{name}.{second.argval}'
                break
        module = value.__name__.replace('nki_sim', 'nki', 1) if value.__name__.startswith('nki_sim') else \
            value.__name__
        raise CompileError(
            f"{func.__name__}: failed to resolve name '{used}': `{name}` ({module}) is a variable of the "
            'function that defines the kernel, not a global of its module; NKI compiles a top-level function and '
            'resolves its names against the module\'s globals, so import it at module level')


class AddressRotation(enum.Enum):
    """`nki.compiler.AddressRotation` (NKI 0.7, the nki.compiler pages of Neuron 2.33.1): "Whether the backend may
    rotate a memloc's address for better layout"; a CompileConfig option."""
    AUTO = 0
    ENABLE = 1
    DISABLE = 2


class _KernelConfig:
    """A per-kernel config object of `nki.compiler` (NKI 0.7): options by keyword, each of the type its page gives;
    an unset option reads None (the stub's `...`). Compiler options only: they change neither the simulated results
    nor the timing model, and an unknown or mistyped option is a CompileError naming it."""
    OPTIONS: Dict[str, Any] = {}

    def __init__(self, *args: Any, **options: Any) -> None:
        name = type(self).__name__
        listed = ', '.join(self.OPTIONS)
        if args:
            raise CompileError(f'nki.compiler.{name} takes its options by keyword ({listed}), as the nki.jit page '
                               f'passes them: {name}(option=value)')
        for option, value in options.items():
            kind = self.OPTIONS.get(option)
            if kind is None:
                raise CompileError(f"nki.compiler.{name} has no option '{option}'; its API page lists {listed}")
            if not isinstance(value, (bool, np.bool_) if kind is bool else kind):
                raise CompileError(f'nki.compiler.{name}({option}=...): its API page types the option {kind.__name__}, '
                                   f'not {type(value).__name__} ({value!r})')
        for option in self.OPTIONS:
            setattr(self, option, options.get(option))
        self.options = dict(options)

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other.options == self.options

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.options.items(), key=lambda item: item[0]))))

    def __repr__(self) -> str:
        return f'{type(self).__name__}({", ".join(f"{k}={v!r}" for k, v in self.options.items())})'


class CompileConfig(_KernelConfig):
    """`nki.compiler.CompileConfig`: "Per-kernel compile configuration passed to @nki.jit(compile_config=...)"."""
    OPTIONS = {'address_rotation': AddressRotation, 'non_ssa_legalization': bool, 'dead_code_elim': bool,
               'barrier_check': bool, 'prefetch_auto': bool, 'nki_alloc_fallback': bool}


class SpecializationConfig(_KernelConfig):
    """`nki.compiler.SpecializationConfig`: "Per-kernel specialization-time config passed to
    @nki.jit(specialization_config=...)"."""
    OPTIONS = {'allow_nested_config_override': bool}


_CONFIG_OPTIONS = (('compile_config', CompileConfig), ('specialization_config', SpecializationConfig))


def jit(func: Any = None, **options: Any) -> Any:
    for option, kind in _CONFIG_OPTIONS:
        value = options.get(option)
        if value is not None and not isinstance(value, kind):
            raise CompileError(f'nki.jit({option}=...) takes a nki.compiler.{kind.__name__} (the nki.jit page of NKI '
                               f'0.7), not {type(value).__name__}')
    simulation = options.get('mode') == 'simulation'
    if func is None:
        return lambda f: jit(f, **options)
    if isinstance(func, Kernel):
        return Kernel(func.func, func.grid, func.core_split, True) if simulation and not func.simulation else func
    return Kernel(func, simulation=simulation)


trace = jit


def baremetal(kernel: Any = None, **options: Any) -> Any:
    """@nki.baremetal / @nki.benchmark / @nki.profile (with or without options): an entry point run like @nki.jit.
    On a device `nki.profile` saves a NEFF and a trace into `working_directory` and returns None (its API page); the
    simulator writes no files, and the profiled kernel's outputs are what the harness compares."""
    if kernel is None:
        return lambda k: baremetal(k, **options)
    return jit(kernel)


benchmark = baremetal
profile = baremetal


def simulate_kernel(kernel: Any, *args: Any, **kwargs: Any) -> Any:
    return simulate(jit(kernel, mode='simulation'), args, kwargs)[0]


def simulated(kernel: Any) -> Kernel:
    """`nki.simulate(kernel)` (the nki.simulate API page of NKI 2.30+: "Create a CPU-simulated version of an NKI
    kernel"; "If a plain function is passed, it is automatically wrapped"; `nki.simulate(my_kernel[2])` for a
    launch grid): the kernel as @nki.jit makes it, which runs on this simulator when called with numpy arrays.
    Public kernel files call it at module level in their host code (the API page's Quick Start example)."""
    return jit(kernel)


class RunObserver:
    """Hooks of `simulate` for program recording; the default does nothing."""

    def start(self, kernel_name: str, grid: Tuple[int, ...], inputs: List[Any], beta2: bool = False) -> None:
        """Before the first kernel call: the kernel file name, SPMD grid, the kernel's input values and whether
        the kernel is written against the Beta 2 `nki` namespace."""

    def program(self, ids: Tuple[int, ...], ordinal: int = 0, core_split: Any = None) -> None:
        """Before each SPMD program's kernel call (also of grids launched inside the kernel); `ordinal` is the
        index of the first shared_hbm tensor the program declares; `core_split` the launch's (axis, cores) when
        it is spread over NeuronCores."""

    def launch_end(self, ids: Tuple[int, ...], core_split: Any = None) -> None:
        """After the last program of a grid launched inside the kernel: the launching code goes on as program
        `ids` again (its core given by `core_split`)."""

    def finish(self, returned: Any) -> None:
        """After the last kernel call (pending result flushed): the kernel's return value."""


def simulate(kernel: Any, args: Sequence[Any], kwargs: Optional[Dict[str, Any]] = None, timing_only: bool = False,
             free_plan: Optional[Dict[int, List[int]]] = None, observer: RunObserver = RunObserver(),
             traced: bool = True) -> Tuple[Any, Any]:
    """Run one kernel invocation. Returns (outputs as numpy arrays or None in timing-only mode, TraceRecorder);
    with `traced` False the instructions are neither traced nor checked (the second value is an Untraced: a
    program's replay checks them)."""
    kernel = jit(kernel)
    func = kernel.func
    kernel_file = func.__code__.co_filename
    name = os.path.basename(kernel_file)
    recorder: Any = TraceRecorder(name, timing_only, free_plan) if traced else Untraced(name)
    run = runtime.Run(kernel_file, recorder, numerics=not timing_only)
    run.grid = kernel.grid
    run.core_split = kernel.core_split
    run.beta2 = uses_beta2(func)
    if run.beta2:
        require_module_level_names(func)
    run.integer_gpsimd = run.beta2
    run.observer = observer
    inputs = [map_arguments(lambda value: _as_input(value, timing_only), a) for a in args]
    observer.start(recorder.kernel_name, kernel.grid, inputs, run.beta2)
    previous = runtime.RUN
    runtime.RUN = run
    try:
        returned = None
        for index, ids in enumerate(itertools.product(*[range(g) for g in kernel.grid])):
            run.enter_program(ids)
            run.shared_ordinal = 0
            observer.program(ids, 0, kernel.core_split)
            value = func(*inputs, **(kwargs or {}))
            if index == 0:
                returned = stored_tiles(value) if kernel.simulation else value
        runtime.flush()
        if returned is None:
            returned = written_arguments(inputs)
        observer.finish(returned)
        check_fresh(returned, run, inputs)
    finally:
        runtime.RUN = previous
    return as_outputs(returned, timing_only), recorder


def written_arguments(inputs: Sequence[Any]) -> Any:
    """The outputs of a kernel that returns nothing (the pre-return NKI form, and in-place updates): the arguments
    it wrote, in argument order (one alone, several as a tuple); None when it wrote none."""
    written = [a for a in argument_leaves(inputs)
               if isinstance(a, Tensor) and a.hbm_alloc is not None and a.hbm_alloc.written]
    if not written:
        return None
    return written[0] if len(written) == 1 else tuple(written)


def check_fresh(value: Any, run: runtime.Run, inputs: Sequence[Any] = ()) -> None:
    """Raise StaleOutputError when a returned HBM tensor is neither created by this run nor one of the kernel's
    `inputs` (an argument updated in place); CompileError when nothing is returned."""
    if value is None:
        raise CompileError('the kernel returned nothing and wrote none of its arguments: NKI kernels return their '
                           'outputs (declare them with nl.ndarray(shape, dtype, buffer=nl.shared_hbm) and return '
                           'them) or write them into arguments')
    if isinstance(value, (tuple, list)):
        for v in value:
            check_fresh(v, run, inputs)
    elif isinstance(value, Tensor) and not value.buffer.on_chip and \
            not any(value.hbm_alloc is out.hbm_alloc for out in run.shared_outputs):
        # nl.hbm (an alias of nl.private_hbm) outputs are the form of the current NKI tutorials: an output of
        # the program that declared it
        if any(value.hbm_alloc is out.hbm_alloc for out in run.private_hbm):
            run.recorder.mark_output(value.hbm_alloc)
            return
        if any(isinstance(argument, Tensor) and value.hbm_alloc is argument.hbm_alloc
               for argument in argument_leaves(inputs)):
            return      # an argument updated in place and returned (torch-neuronx's mutates_args form)
        raise StaleOutputError('the kernel returned an output tensor that this call did not create '
                               '(an output kept from an earlier call?)')


def stored_tiles(value: Any) -> Any:
    """NKI's simulation mode returns the values of returned SBUF/PSUM tiles. Here each such tile is stored to a new
    shared_hbm output by an instruction of the kernel's program (a PSUM tile is copied to SBUF first), so it is
    traced, timed and replayed like any store; HBM tensors and other values stay as they are."""
    if isinstance(value, (tuple, list)):
        return type(value)(stored_tiles(v) for v in value)
    if not isinstance(value, Tensor) or not value.buffer.on_chip:
        return value
    tile = language.copy(value) if value.buffer is memory.psum else value
    output = language.ndarray(tile.shape, dtype=tile.dtype, buffer=memory.shared_hbm)
    language.store(output, value=tile)
    return output


def map_arguments(function: Callable[[Any], Any], value: Any) -> Any:
    """`function` applied to a kernel argument, or to each value inside an argument that is a list or tuple (at any
    depth), keeping the structure: the NKI Library's entries take `List[nl.ndarray]` arguments (a list of HBM
    tensors, one per layer)."""
    if type(value) in (list, tuple):
        return type(value)(map_arguments(function, v) for v in value)
    return function(value)


def argument_leaves(values: Iterable[Any]) -> Iterator[Any]:
    """The values of kernel arguments, those inside lists and tuples included, depth first: the order in which the
    inputs are declared (the program's header) and given (Problem.kernel_arrays)."""
    for value in values:
        if type(value) in (list, tuple):
            yield from argument_leaves(value)
        else:
            yield value


def _as_input(value, timing_only):
    if isinstance(value, InputSpec) or timing_only and isinstance(value, np.ndarray):
        return shape_only_input(value.shape, value.dtype)
    if isinstance(value, np.ndarray):
        return hbm_tensor(value, memory.shared_hbm, name='input')
    return value


def as_outputs(value: Any, timing_only: bool) -> Any:
    if isinstance(value, Tensor):
        if value.buffer.on_chip:        # checked in timing-only runs too: both runs give the same verdict
            raise CompileError(f'a kernel must return HBM tensors (declared with buffer=nl.shared_hbm); it returned '
                               f'a tile in {value.buffer!r} (only NKI\'s simulation mode, @nki.jit(mode="simulation"), '
                               f'returns tile values; a kernel compiled for the device cannot: store the tile to an '
                               f'HBM output)')
        if timing_only:
            return None
        return value.hbm_alloc.data.reshape(value.shape)
    if isinstance(value, (tuple, list)):
        return tuple(as_outputs(v, timing_only) for v in value)
    return value
