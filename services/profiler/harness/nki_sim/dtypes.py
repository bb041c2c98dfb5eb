"""Data types as kernels name them (np.float32, nl.bfloat16, tensor.dtype) and how they are stored.

Every kernel-facing dtype normalises to a `Kind`: the numpy storage dtype and the size the hardware uses.
Low-precision float formats numpy lacks (bfloat16, tfloat32, fp8) are stored as float32; bfloat16 values are
rounded to bfloat16 precision when written, the others are kept at float32 precision (a documented gap).
"""
from typing import Any, Dict

import numpy as np


class LowPrecisionType:
    """A dtype numpy does not provide; instances are the values of nl.bfloat16 and friends."""

    def __init__(self, name, itemsize):
        self.name = name
        self.itemsize = itemsize

    def __repr__(self):
        return self.name


bfloat16 = LowPrecisionType('bfloat16', 2)
tfloat32 = LowPrecisionType('tfloat32', 4)
float8_e4m3 = LowPrecisionType('float8_e4m3', 1)
float8_e5m2 = LowPrecisionType('float8_e5m2', 1)


class Kind:
    """Storage dtype plus hardware element size of one kernel-facing dtype."""
    __slots__ = ('public', 'storage', 'itemsize', 'rounds_to_bf16')

    def __init__(self, public, storage, itemsize, rounds_to_bf16=False):
        self.public = public
        self.storage = storage
        self.itemsize = itemsize
        self.rounds_to_bf16 = rounds_to_bf16


_KINDS: Dict[Any, Kind] = {}


def kind_of(dtype: Any) -> Kind:
    """Normalise any accepted dtype spelling to its Kind (cached)."""
    try:
        return _KINDS[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, LowPrecisionType):
        kind = Kind(dtype, np.dtype(np.float32), dtype.itemsize, dtype is bfloat16)
    else:
        npdt = np.dtype(dtype)
        kind = Kind(npdt, npdt, npdt.itemsize)
    try:
        _KINDS[dtype] = kind
    except TypeError:
        pass
    return kind


def round_to_bf16(array: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), in place."""
    bits = array.view(np.uint32)
    bits += np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    bits &= np.uint32(0xFFFF0000)
    return array
