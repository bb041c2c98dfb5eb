"""A problem: an NKIBench-style numpy reference module plus optional problem.yaml metadata.

Reference module contract: get_inputs(), forward(*inputs), transform_to_nki_inputs(inputs),
transform_nki_outputs(kernel_outputs, reference_outputs).
problem.yaml (beside the module as problem.yaml or <module stem>.yaml, or given explicitly):
  name: str                      default: the module's file stem
  parameters: {NAME: number}     default: {}
  tolerance: float               default: 2e-5 (relative L2 error bound)
  roofline: {vector_flops, matmul_flops, hbm_bytes}   numbers, or arithmetic over parameter names
Any failure here is the problem's fault, never the kernel's: ProblemError.
"""
import ast
import importlib.util
import operator
import os

import yaml

DEFAULT_TOLERANCE = 2e-5
REQUIRED_FUNCTIONS = ('get_inputs', 'forward', 'transform_to_nki_inputs', 'transform_nki_outputs')
ROOFLINE_KEYS = ('vector_flops', 'matmul_flops', 'hbm_bytes')


class ProblemError(Exception):
    pass


class Problem:
    def __init__(self, module, name, tolerance, parameters, roofline, tolerance_set=True):
        self.module = module
        self.name = name
        self.tolerance = tolerance
        self.tolerance_set = tolerance_set      # False: the default, widened for float16 reference outputs
        self.parameters = parameters
        self.roofline = roofline

    def summary(self, tolerance=None):
        return {'name': self.name, 'tolerance': self.tolerance if tolerance is None else tolerance,
                'roofline': self.roofline}


def load_module(path, name, preset=None):
    """Import the file at `path` as module `name`; `preset` names are bound in it before its code runs."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f'cannot load {path}')
    module = importlib.util.module_from_spec(spec)
    if preset:
        vars(module).update(preset)
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
    metadata = _read_metadata(reference_path, metadata_path)
    stem = os.path.splitext(os.path.basename(reference_path))[0]
    parameters = metadata.get('parameters') or {}
    if not isinstance(parameters, dict):
        raise ProblemError('problem.yaml: parameters must be a map')
    try:
        tolerance = float(metadata.get('tolerance', DEFAULT_TOLERANCE))
    except (TypeError, ValueError) as error:
        raise ProblemError(f'problem.yaml: bad tolerance: {error}') from error
    return Problem(module, str(metadata.get('name', stem)), tolerance, parameters,
                   _roofline(metadata.get('roofline'), parameters), tolerance_set='tolerance' in metadata)


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
