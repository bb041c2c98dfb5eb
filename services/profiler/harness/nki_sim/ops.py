"""Operator arguments (`op=`, `op0=`, `reduce_op=`...) resolved to numpy.

Kernels pass ALU operators as nl functions (nl.add, nl.maximum, nl.max) or numpy functions (np.add, np.max);
activation functions as nl functions (nl.exp, nl.copy, ...). nl functions carry their numpy meaning in `alu`
(binary elementwise ufunc) or `activation` (unary) attributes set by the language module.
"""
from typing import Any

import numpy as np

from .errors import CompileError
from .target import require_generation

NUMPY_ALU = {
    np.add: np.add, np.subtract: np.subtract, np.multiply: np.multiply, np.divide: np.divide,
    np.maximum: np.maximum, np.minimum: np.minimum, np.max: np.maximum, np.amax: np.maximum,
    np.min: np.minimum, np.amin: np.minimum, np.sum: np.add, np.power: np.power, np.mod: np.mod,
    np.bitwise_and: np.bitwise_and, np.bitwise_or: np.bitwise_or, np.bitwise_xor: np.bitwise_xor,
    np.left_shift: np.left_shift, np.right_shift: np.right_shift, np.equal: np.equal,
    np.not_equal: np.not_equal, np.greater: np.greater, np.greater_equal: np.greater_equal,
    np.less: np.less, np.less_equal: np.less_equal, np.logical_and: np.logical_and,
    np.logical_or: np.logical_or, np.logical_xor: np.logical_xor,
}
_NO_OPERAND = object()


class MagnitudeChoice:
    """nl.abs_max / nl.abs_min (NKI 2.31+) as an ALU operator: element-wise, the input whose magnitude is larger
    (abs_max) or smaller (abs_min), keeping its sign; on a tie the second input (the API pages' examples:
    abs_max(-5, 3) = -5, abs_max(1, -1) = -1). `reduce` folds it along an axis (activate2's reduce_op)."""

    def __init__(self, name: str, larger: bool) -> None:
        self.__name__ = name
        self.larger = larger

    def require_generation(self) -> None:
        require_generation(f'nl.{self.__name__}', 4, 'its page: "Available only on NeuronCore-v4 (trn3) and newer"')

    def __call__(self, x: Any, y: Any) -> Any:
        x, y = np.asarray(x), np.asarray(y)
        keep_x = np.abs(x) > np.abs(y) if self.larger else np.abs(x) < np.abs(y)
        return np.where(keep_x, x, y)

    def reduce(self, values: Any, axis: int) -> Any:
        values = np.asarray(values)
        if values.shape[axis] == 0:
            raise CompileError(f'{self.__name__}: nothing to reduce')
        moved = np.moveaxis(values, axis, 0)
        out = moved[0]
        for row in moved[1:]:
            out = self(out, row)
        return out


ABS_MAX = MagnitudeChoice('abs_max', larger=True)
ABS_MIN = MagnitudeChoice('abs_min', larger=False)


def _bypass(x: Any, operand: Any) -> Any:
    """nl.bypass: activate2's "no tensor-scalar operation" in its op0/op1 stage (passes the data through)."""
    return x


BYPASS = _bypass


def _magnitude(x: Any, operand: Any) -> Any:
    """The ALU `abs` operator with operand 0: |x| (kernels write `op0=nl.abs, operand0=0.0`)."""
    return np.abs(x)


def _is_abs(op: Any) -> bool:
    return op is np.abs or getattr(op, 'activation', None) is np.abs


def _reverse_sqrt(x: Any, operand: Any) -> Any:
    """The ALU `rsqrt` operator (Reverse Square Root) with operand 0: 1 / sqrt(x)."""
    return np.float32(1.0) / np.sqrt(x)


def _reciprocal(x: Any, operand: Any) -> Any:
    """The ALU `reciprocal` operator with operand 0: 1 / x."""
    return np.float32(1.0) / x


def _unary_alu_name(op: Any) -> Any:
    """'abs', 'rsqrt' or 'reciprocal' when `op` is one of the one-input operators of the NKI API's "Supported Math
    Operators" table (Absolute nl.abs, Reverse Square Root nl.rsqrt, Reciprocal nl.reciprocal), else None."""
    if _is_abs(op):
        return 'abs'
    if op is np.reciprocal:
        return 'reciprocal'
    if getattr(op, 'activation', None) is not None and getattr(op, '__name__', None) in ('rsqrt', 'reciprocal'):
        return op.__name__
    return None


UNARY_ALU = {'abs': _magnitude, 'rsqrt': _reverse_sqrt, 'reciprocal': _reciprocal}
UNARY_ALU_FNS = frozenset(UNARY_ALU.values())


# ALU operators whose repeated in-place application `acc = op(acc, x)` is an associative (and commutative)
# reduction: NKI does not count such a fold as a loop-carried dependence of an affine_range loop.
ASSOCIATIVE_ALU = frozenset((np.add, np.multiply, np.maximum, np.minimum, np.bitwise_and, np.bitwise_or,
                             np.bitwise_xor, np.logical_and, np.logical_or, np.logical_xor))

# The arithmetic ALU operators of the NKI API's "Supported Math Operators" table (the rest are bitvec: bitwise
# and/or/xor/invert and the shifts, which read integers as bit patterns; the logical operators are not listed).
ARITHMETIC_ALU = frozenset((np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.power, np.mod,
                            np.equal, np.not_equal, np.greater, np.greater_equal, np.less, np.less_equal, ABS_MAX,
                            ABS_MIN, _reverse_sqrt, _reciprocal))


# The bitvec ALU operators: they read integers as bit patterns.
BITVEC_ALU = frozenset((np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift, np.invert))


def float32_operands(values: Any, *fns: Any) -> Any:
    """The operand values an instruction's ALU reads. When every operator in `fns` is arithmetic, integer operands
    (arrays and numpy integer scalars) are converted to float32 first: "instructions using arithmetic operators
    accept any valid NKI data type and convert input elements into float32 before performing the operators" (NKI
    API common fields), so an int32 above 2**24 loses its low bits as on the hardware. Otherwise (bitvec operators,
    or none given) the values are returned as they are."""
    if not fns or any(fn not in ARITHMETIC_ALU for fn in fns):
        return values
    return [_float32(v) for v in values]


def _float32(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind in 'iu':
        return value.astype(np.float32)
    if isinstance(value, np.integer):
        return np.float32(value)
    return value


NUMPY_ACTIVATION = {
    np.exp: np.exp, np.log: np.log, np.sqrt: np.sqrt, np.tanh: np.tanh, np.square: np.square,
    np.abs: np.abs, np.sin: np.sin, np.cos: np.cos, np.negative: np.negative,
    np.copy: np.copy,      # the identity (nl.copy), as the NKI attention samples spell it: nisa.activation(np.copy, x)
}


def alu(op: Any, operand: Any = _NO_OPERAND) -> Any:
    """The numpy binary ufunc for an ALU operator argument. `abs` (nl.abs / np.abs) is an ALU operator only with a
    scalar operand 0 (`tensor_scalar(data, op0=nl.abs, operand0=0.0)`: |data|); the simulator refuses any other
    operand rather than ignore it."""
    unary = _unary_alu_name(op)
    if unary is not None:
        if operand is _NO_OPERAND:
            shown: Any = 'none'
        elif not isinstance(operand, (int, float, np.number)):
            shown = 'a tile'
        elif isinstance(operand, bool) or operand != 0:
            shown = operand
        else:
            return UNARY_ALU[unary]
        meaning = {'abs': '|x|', 'rsqrt': '1 / sqrt(x)', 'reciprocal': '1 / x'}[unary]
        raise CompileError(f'{unary} as an ALU operator is modelled as {meaning} with the scalar operand 0 only ('
                           f'tensor_scalar(..., op0=nl.{unary}, operand0=0.0)); got operand {shown}')
    fn = getattr(op, 'alu', None)
    if fn is BYPASS:
        raise CompileError('nl.bypass is modelled as the op0/op1 of nisa.activate2 only (no tensor-scalar '
                           'operation); other instructions take an arithmetic operator')
    if fn is None:
        try:
            fn = NUMPY_ALU.get(op)
        except TypeError:
            fn = None
    if fn is None:
        raise CompileError(f'unsupported ALU operator {getattr(op, "__name__", op)!r}')
    if isinstance(fn, MagnitudeChoice):
        fn.require_generation()
    return fn


def activation(op: Any) -> Any:
    """The numpy unary function for an activation function argument."""
    fn = getattr(op, 'activation', None)
    if fn is None:
        try:
            fn = NUMPY_ACTIVATION.get(op)
        except TypeError:
            fn = None
    if fn is None:
        raise CompileError(f'unsupported activation function {getattr(op, "__name__", op)!r}')
    return fn
