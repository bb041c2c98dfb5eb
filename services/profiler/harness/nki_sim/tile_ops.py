"""Tile operators (`+ - * / ** unary-`, comparisons, `[...] =`, `+=`, `.broadcast_to`, `.reshape`, `.indirect`) as seen
by the data types, without the data types importing the execution layer.

`Tensor` and `View` (lower layer) inherit `TileOperators`; every operator forwards to `EXECUTION`, which the
execution layer (`compute`) fills in when it is imported. This inversion is what keeps nki_sim's import graph
acyclic: data types never import the code that executes instructions.
"""
from typing import Any, Callable

import numpy as np

from .affine import Affine, DynamicIndex
from .errors import CompileError, UnsupportedApi


def _not_installed(*args: Any) -> Any:
    raise CompileError('nki_sim.compute is not imported: tile operators need the execution layer')


class Execution:
    """The execution-layer entry points tile operators use; `compute` installs the real ones."""
    flush: Callable[[], None] = staticmethod(_not_installed)
    assign: Callable[[Any, Any], None] = staticmethod(_not_installed)
    accumulate: Callable[[Any, Any], None] = staticmethod(_not_installed)
    binary: Callable[[str, Any, Any], Any] = staticmethod(_not_installed)
    negate: Callable[[Any], Any] = staticmethod(_not_installed)
    broadcast_to: Callable[[Any, Any], Any] = staticmethod(_not_installed)
    reshape: Callable[[Any, Any], Any] = staticmethod(_not_installed)
    indirect: Callable[[Any, Any, Any], Any] = staticmethod(_not_installed)
    bitcast: Callable[[Any, Any], Any] = staticmethod(_not_installed)
    astype: Callable[[Any, Any], Any] = staticmethod(_not_installed)
    itemsize: Callable[[Any], int] = staticmethod(_not_installed)
    beta1_method: Callable[[Any, str], Callable[..., Any]] = staticmethod(_not_installed)


EXECUTION = Execution


def _compare(name: str, tile: Any, other: Any) -> Any:
    if isinstance(other, (TileOperators, int, float, np.number)) and not isinstance(other, bool):
        return EXECUTION.binary(name, tile, other)
    return NotImplemented


_ATTRIBUTE_HINTS = {
    'T': 'transpose with nl.transpose or nisa.nc_transpose',
    'itemsize': 'it is an attribute of Beta 1 (neuronxcc.nki) tensors; the Beta 2 NkiTensor page lists no itemsize',
    'expand_dims': 'it is a method of Beta 1 (neuronxcc.nki) tensors; the Beta 2 NkiTensor has expand_dim(dim) '
                   'instead, and nl.expand_dims is the function form',
    'assert_shape': 'it is a method of Beta 1 (neuronxcc.nki) tensors; the Beta 2 NkiTensor page lists no '
                    'assert_shape',
}

# NkiTensor attributes a Beta 2 nki.language stub lists that the simulator does not model, with the reason (the API
# audit, docs/simulator.md)
_LISTED_ATTRIBUTES = {
    'reinterpret_cast': 'the newest nki.language stub lists it as a bare attribute, without documentation '
                        '(t.view(dtype) reinterprets the bits, as its page describes)',
    'is_identity': 'an NKI 0.3 nki.language stub lists it ("no .ap() or slicing") without saying whether a view of the '
                   'whole tensor counts; the newest stub has is_contiguous() instead',
    'sim_value': 'it is the value NKI\'s own CPU simulator computed (an NKI 0.3 stub\'s debugging attribute), not '
                 'something a kernel computes with',
    'device_value': 'it is a device dump (an NKI 0.3 stub\'s debugging attribute), not something a kernel computes '
                    'with',
}


def _offsets(tile: Any) -> bool:
    """Can `tile` hold dynamic offsets (an integer SBUF tile of one offset, [N, 1] or [1, N]: the dynamic copies'
    index operand)? Such a tile plus an index expression is a dynamic index; any other tile plus one computes with
    the expression's values (runtime.index_values)."""
    tensor = getattr(tile, 'tensor', tile)
    shape = tile.shape
    return tensor.buffer.name == 'sbuf' and tensor.kind.storage.kind in 'iu' and len(shape) == 2 and 1 in shape


class TileOperators:
    """Arithmetic operators shared by Tensor and View: each one issues an nl elementwise instruction."""
    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        """An attribute tiles do not have (numpy's `.T`): a COMPILE_ERROR naming it, also an
        AttributeError, so hasattr() answers False."""
        if name.startswith('_'):
            raise AttributeError(name)
        listed = _LISTED_ATTRIBUTES.get(name)
        if listed:
            raise UnsupportedApi(f'tile attribute .{name} is not supported by the simulator: {listed}')
        hint = _ATTRIBUTE_HINTS.get(name)
        raise UnsupportedApi(f'tile attribute .{name} is not supported by the simulator: it is not an attribute of '
                             f'NKI tensors in the API reference' + (f' ({hint})' if hint else ''))

    def astype(self, dtype: Any) -> Any:
        """`t.astype(dtype)` (nki.tensor.astype, listed in the Beta 1 API index): the tile converted to `dtype`,
        one copy instruction as `nl.copy(t, dtype=dtype)`."""
        return EXECUTION.astype(self, dtype)

    @property
    def expand_dims(self) -> Callable[..., Any]:
        """`t.expand_dims(axis)` (nki.tensor in the Beta 1 API reference: "Gives a new shape to a tensor by adding a
        dimension of size 1 at the specified position"): the view `nl.expand_dims(t, axis)` gives, no instruction.
        Beta 2's NkiTensor has `expand_dim` instead, so a Beta 2 kernel keeps the COMPILE_ERROR naming it."""
        return EXECUTION.beta1_method(self, 'expand_dims')

    @property
    def assert_shape(self) -> Callable[..., Any]:
        """`t.assert_shape(shape)` (nki.tensor in the Beta 1 API reference: "Assert that the tensor has the given
        shape", returning the tensor): a COMPILE_ERROR naming both shapes when they differ. Beta 1 only."""
        return EXECUTION.beta1_method(self, 'assert_shape')

    @property
    def itemsize(self) -> int:
        """`t.itemsize` (nki.tensor's attribute in the Beta 1 API reference: "Length of one tensor element in
        bytes"): the NKI format's size, 2 for bfloat16. Beta 2's NkiTensor does not list it."""
        return EXECUTION.itemsize(self)

    def __add__(self, other: Any) -> Any:
        if isinstance(other, Affine) and _offsets(self):    # `off[0, 0] + i_f`: a dynamic offset of an index
            return DynamicIndex(other, self)
        return EXECUTION.binary('add', self, other)

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, Affine) and _offsets(self):    # `i_f + off[0, 0]`
            return DynamicIndex(other, self)
        return EXECUTION.binary('add', other, self)

    def __sub__(self, other: Any) -> Any:
        return EXECUTION.binary('subtract', self, other)

    def __rsub__(self, other: Any) -> Any:
        return EXECUTION.binary('subtract', other, self)

    def __mul__(self, other: Any) -> Any:
        return EXECUTION.binary('multiply', self, other)

    def __rmul__(self, other: Any) -> Any:
        return EXECUTION.binary('multiply', other, self)

    def __truediv__(self, other: Any) -> Any:
        return EXECUTION.binary('divide', self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return EXECUTION.binary('divide', other, self)

    def __pow__(self, other: Any) -> Any:
        return EXECUTION.binary('power', self, other)

    # Comparisons are elementwise, as numpy's (`class_iota == targets_tile` in a public cross-entropy kernel is
    # nl.equal); with anything but a tile or a number they stay Python's identity comparison. Tiles stay hashable.
    def __eq__(self, other: Any) -> Any:
        return _compare('equal', self, other)

    def __ne__(self, other: Any) -> Any:
        return _compare('not_equal', self, other)

    def __lt__(self, other: Any) -> Any:
        return _compare('less', self, other)

    def __le__(self, other: Any) -> Any:
        return _compare('less_equal', self, other)

    def __gt__(self, other: Any) -> Any:
        return _compare('greater', self, other)

    def __ge__(self, other: Any) -> Any:
        return _compare('greater_equal', self, other)

    __hash__ = object.__hash__

    def __neg__(self) -> Any:
        return EXECUTION.negate(self)
