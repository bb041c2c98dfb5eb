"""A problem: an NKIBench-style numpy reference module plus optional problem.yaml metadata.

Reference module contract: get_inputs(), forward(*inputs), and optionally transform_to_nki_inputs(inputs) (the
kernel's arguments; default: the inputs as they are) and transform_nki_outputs(kernel_outputs, reference_outputs)
(the kernel's outputs in the reference's layout; default: the outputs as they are, compared shape for shape).
problem.yaml (beside the module as problem.yaml or <module stem>.yaml, or given explicitly):
  name: str                      default: the module's file stem
  parameters: {NAME: number}     default: {}
  tolerance: float               default: 2e-5 (relative L2 error bound)
  roofline: {vector_flops, matmul_flops, hbm_bytes}   numbers, or arithmetic over parameter names
  nki_input_dtypes: [name or null, ...]   the NKI format of each array kernel input (see kernel_arrays);
                                 also a module constant NKI_INPUT_DTYPES in the reference (not both)
Any failure here is the problem's fault, never the kernel's: ProblemError.
"""
import ast
import contextlib
import importlib.util
import operator
import os
import sys

import numpy as np
import yaml

from nki_sim.dtypes import LOW_PRECISION, kind_of
from nki_sim.jit import argument_leaves

DEFAULT_TOLERANCE = 2e-5
REQUIRED_FUNCTIONS = ('get_inputs', 'forward')


def _inputs_as_given(inputs):
    return inputs


def _outputs_as_given(kernel_outputs, reference_outputs):
    return kernel_outputs


# NKIBench's transforms, which a reference of one's own may leave out
OPTIONAL_FUNCTIONS = {'transform_to_nki_inputs': _inputs_as_given, 'transform_nki_outputs': _outputs_as_given}
ROOFLINE_KEYS = ('vector_flops', 'matmul_flops', 'hbm_bytes')
INPUT_DTYPES_KEY = 'nki_input_dtypes'           # problem.yaml
INPUT_DTYPES_CONSTANT = 'NKI_INPUT_DTYPES'      # the reference module
# numpy formats a declaration may name: the array must already have it (the entry only documents it)
NUMPY_INPUT_DTYPES = ('bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float16',
                      'float32', 'float64')


class ProblemError(Exception):
    pass


class Problem:
    def __init__(self, module, name, tolerance, parameters, roofline, tolerance_set=True, input_dtypes=None):
        self.module = module
        self.name = name
        self.tolerance = tolerance
        self.tolerance_set = tolerance_set      # False: the default, widened for float16 reference outputs
        self.parameters = parameters
        self.roofline = roofline
        self.input_dtypes = input_dtypes        # None, or one dtype name (or None: as given) per array input

    def kernel_arrays(self, nki_inputs):
        """The array kernel inputs among transform_to_nki_inputs' values, those inside list and tuple values too,
        depth first (other values, such as tile counts, are the kernel's Python arguments), and the NKI format of
        each: (arrays, formats), a format being a LowPrecisionType (nl.bfloat16, nl.float8_e4m3, ...) or None for
        the array's own numpy dtype.

        An input declared in a format numpy lacks is rounded onto that format's grid (the simulator's own
        rounding: to nearest even, saturating as the format does) and stored as float32. A float32 array is
        rounded in place (so a reference input that is this array, or that it views, reaches `forward` rounded:
        the reference computes on the values the kernel gets); another float array is rounded in a float32 copy,
        written back into it when its dtype holds the rounded values exactly. Call before `forward`."""
        arrays = [a for a in argument_leaves(nki_inputs) if isinstance(a, np.ndarray)]
        if self.input_dtypes is None:
            return arrays, [None] * len(arrays)
        if len(self.input_dtypes) != len(arrays):
            raise ProblemError(f'problem {self.name}: {INPUT_DTYPES_KEY} declares {len(self.input_dtypes)} '
                               f'input format(s); transform_to_nki_inputs returned {len(arrays)} array(s)')
        formats = []
        for index, (array, name) in enumerate(zip(arrays, self.input_dtypes)):
            if name in LOW_PRECISION:
                if array.dtype.kind != 'f':
                    raise ProblemError(f'problem {self.name}: {INPUT_DTYPES_KEY}: input {index} is declared {name} '
                                       f'but is a {array.dtype} array (a float array is rounded to the format)')
                arrays[index] = _rounded(array, name)
                formats.append(LOW_PRECISION[name])
                continue
            if name is not None and np.dtype(name) != array.dtype:
                raise ProblemError(f'problem {self.name}: {INPUT_DTYPES_KEY}: input {index} is declared {name} '
                                   f'but is a {array.dtype} array')
            formats.append(None)
        return arrays, formats

    def summary(self, tolerance=None):
        return {'name': self.name, 'tolerance': self.tolerance if tolerance is None else tolerance,
                'roofline': self.roofline}


@contextlib.contextmanager
def registered(module):
    """`module` in sys.modules while its code runs, as an import would have it: @dataclass resolves a string
    annotation (`field: "Optional[Cls]"`) through sys.modules[cls.__module__]. Removed again afterwards, so that
    nothing later in the process finds the file's module by name."""
    saved = sys.modules.get(module.__name__)
    sys.modules[module.__name__] = module
    try:
        yield module
    finally:
        if saved is None:
            sys.modules.pop(module.__name__, None)
        else:
            sys.modules[module.__name__] = saved


def load_module(path, name, preset=None):
    """Import the file at `path` as module `name`; `preset` names are bound in it before its code runs."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f'cannot load {path}')
    module = importlib.util.module_from_spec(spec)
    if preset:
        vars(module).update(preset)
    with registered(module):
        spec.loader.exec_module(module)
    return module


def load_problem(reference_path, metadata_path=None):
    reference_path = os.path.abspath(reference_path)
    try:
        module = load_module(reference_path, 'accelopt_problem_reference')
    except Exception as error:
        raise ProblemError(f'cannot load reference {os.path.basename(reference_path)}: '
                           f'{type(error).__name__}: {error}') from error
    missing = [f for f in REQUIRED_FUNCTIONS if not callable(getattr(module, f, None))]
    if missing:
        raise ProblemError(f'reference module lacks {", ".join(missing)}')
    for name, default in OPTIONAL_FUNCTIONS.items():
        if not hasattr(module, name):
            setattr(module, name, default)
        elif not callable(getattr(module, name)):
            raise ProblemError(f'reference module: {name} is not a function')
    metadata = _read_metadata(reference_path, metadata_path)
    stem = os.path.splitext(os.path.basename(reference_path))[0]
    parameters = metadata.get('parameters') or {}
    if not isinstance(parameters, dict):
        raise ProblemError('problem.yaml: parameters must be a map')
    try:
        tolerance = float(metadata.get('tolerance', DEFAULT_TOLERANCE))
    except (TypeError, ValueError) as error:
        raise ProblemError(f'problem.yaml: bad tolerance: {error}') from error
    name = str(metadata.get('name', stem))
    return Problem(module, name, tolerance, parameters, _roofline(metadata.get('roofline'), parameters),
                   tolerance_set='tolerance' in metadata, input_dtypes=_input_dtypes(metadata, module, name))


def _input_dtypes(metadata, module, name):
    """The problem's declared kernel input formats: a list of dtype names (or None) or None when undeclared."""
    in_yaml = metadata.get(INPUT_DTYPES_KEY)
    in_module = getattr(module, INPUT_DTYPES_CONSTANT, None)
    if in_yaml is not None and in_module is not None:
        raise ProblemError(f'problem {name}: the input formats are declared twice (problem.yaml '
                           f'{INPUT_DTYPES_KEY} and the reference\'s {INPUT_DTYPES_CONSTANT}); keep one')
    declared, where = (in_yaml, f'problem.yaml {INPUT_DTYPES_KEY}') if in_yaml is not None else \
        (in_module, f'reference {INPUT_DTYPES_CONSTANT}')
    if declared is None:
        return None
    if not isinstance(declared, (list, tuple)):
        raise ProblemError(f'problem {name}: {where} must be a list with one dtype name (or null) per array kernel '
                           f'input, not {declared!r}')
    known = tuple(LOW_PRECISION) + NUMPY_INPUT_DTYPES
    for entry in declared:
        if entry is not None and (not isinstance(entry, str) or entry not in known):
            raise ProblemError(f'problem {name}: {where}: unknown dtype {entry!r} (known: {", ".join(known)})')
    return tuple(declared)


def _rounded(array, name):
    """`array`'s values on the grid of the NKI format `name`, as float32 (see Problem.kernel_arrays)."""
    rounding = kind_of(LOW_PRECISION[name]).rounding
    if array.dtype == np.float32 and array.flags.writeable:
        return rounding(array)
    stored = rounding(array.astype(np.float32))
    if array.flags.writeable:
        back = stored.astype(array.dtype)
        if np.array_equal(back.astype(np.float32), stored, equal_nan=True):
            array[...] = back
    return stored


def _read_metadata(reference_path, metadata_path):
    if metadata_path is None:
        folder = os.path.dirname(reference_path)
        stem = os.path.splitext(os.path.basename(reference_path))[0]
        # reference_small.py -> reference_small.yaml, then problem_small.yaml, then problem.yaml
        names = (stem + '.yaml', stem.replace('reference', 'problem') + '.yaml', 'problem.yaml')
        for candidate in (os.path.join(folder, name) for name in names):
            if os.path.exists(candidate):
                metadata_path = candidate
                break
        else:
            return {}
    try:
        with open(metadata_path) as f:
            metadata = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ProblemError(f'cannot read {metadata_path}: {error}') from error
    if not isinstance(metadata, dict):
        raise ProblemError(f'{metadata_path}: expected a map at the top level')
    return metadata


def _roofline(spec, parameters):
    if spec is None:
        return None
    if not isinstance(spec, dict) or set(spec) - set(ROOFLINE_KEYS):
        raise ProblemError(f'problem.yaml: roofline must be a map with keys {", ".join(ROOFLINE_KEYS)}')
    return {key: _number(spec.get(key, 0), parameters, key) for key in ROOFLINE_KEYS}


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.USub: operator.neg}


def _number(value, parameters, key):
    """A roofline term: a number, or an arithmetic expression over parameter names (e.g. "2*M*N*K")."""
    if isinstance(value, (int, float)):
        return value
    try:
        tree = ast.parse(str(value), mode='eval').body
        return _evaluate(tree, parameters)
    except (SyntaxError, ValueError, KeyError, ZeroDivisionError) as error:
        raise ProblemError(f'problem.yaml: roofline {key}: cannot evaluate {value!r}: {error}') from error


def _evaluate(node, parameters):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        return parameters[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left, parameters), _evaluate(node.right, parameters))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand, parameters))
    raise ValueError('only numbers, parameter names and + - * / // ** are allowed')
