"""Data types as kernels name them (np.float32, nl.bfloat16, tensor.dtype) and how they are stored.

Every kernel-facing dtype normalises to a `Kind`: the numpy storage dtype and the size the hardware uses.
Low-precision float formats numpy lacks (bfloat16, tfloat32, fp8) are stored as float32; bfloat16 values are
rounded to bfloat16 precision when written, the others are kept at float32 precision (a documented gap).
"""
from typing import Any, Dict

import numpy as np


class LowPrecisionType:
    """A dtype numpy does not provide; instances are the values of nl.bfloat16 and friends.

    `np.dtype(nl.bfloat16)` is float32 storage tagged with the type's name (metadata {'nki': name}), which
    `kind_of` maps back; `.min`/`.max` are the format's finite limits."""

    def __init__(self, name, itemsize, limit):
        self.name = name
        self.itemsize = itemsize
        self.max = limit
        self.min = -limit
        self.dtype = np.dtype(np.float32, metadata={'nki': name})

    def __repr__(self):
        return self.name


class NumericType:
    """nl.fp32 / nl.fp16 / nl.int32 ... spellings: a numpy dtype with `.min`, `.max` and `np.dtype()` support."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.name = self.dtype.name
        self.itemsize = self.dtype.itemsize
        info = np.finfo(self.dtype) if self.dtype.kind == 'f' else np.iinfo(self.dtype)
        self.min = info.min.item() if hasattr(info.min, 'item') else info.min
        self.max = info.max.item() if hasattr(info.max, 'item') else info.max

    def __repr__(self):
        return self.name


bfloat16 = LowPrecisionType('bfloat16', 2, 3.3895313892515355e38)
tfloat32 = LowPrecisionType('tfloat32', 4, 3.4028234663852886e38)
float8_e4m3 = LowPrecisionType('float8_e4m3', 1, 240.0)
float8_e5m2 = LowPrecisionType('float8_e5m2', 1, 57344.0)
LOW_PRECISION = {t.name: t for t in (bfloat16, tfloat32, float8_e4m3, float8_e5m2)}


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
    tag = dtype.metadata.get('nki') if isinstance(dtype, np.dtype) and dtype.metadata else None
    if tag in LOW_PRECISION:          # np.dtype(nl.bfloat16); equal to (and hashed as) float32, so never cached
        return kind_of(LOW_PRECISION[tag])
    try:
        return _KINDS[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, NumericType):
        return kind_of(dtype.dtype)
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
