"""Data types as kernels name them (np.float32, nl.bfloat16, tensor.dtype) and how they are stored.

Every kernel-facing dtype normalises to a `Kind`: the numpy storage dtype and the size the hardware uses.
Low-precision float formats numpy lacks (bfloat16, tfloat32, fp8) are stored as float32 and rounded to their
precision when written (`Kind.rounding`): bfloat16 and tfloat32 to nearest even, fp8 e4m3 / e5m2 to nearest even
with the format's subnormals and saturating at its largest finite value (240 for the e4m3 of NeuronCores, 448 for
the OCP e4m3fn, which has no infinities).
A float result written to an integer dtype saturates at the integer's range (NaN gives 0): numpy leaves that
conversion undefined (an out-of-range float32 becomes 0 on x86), while kernels such as AWS's neuronx-distributed
find_index add offsets to nc_find_index8's UINT32_MAX "absent" marker and pool with a min (`to_storage`).
"""
from typing import Any, Dict

import numpy as np

from .errors import CompileError, not_modelled_cause


# The bit pattern of integer memory a kernel declared without initializing it (tensors.uninitialized), far from zero;
# under the alternate fill (AlternateFill) its complement, negative in a signed type, and zero in every other element.
UNINITIALIZED_BITS = 0x5A5A5A5A5A5A5A5A


class AlternateFill:
    """While active, memory no instruction wrote holds other values than the usual fill: large finite numbers of
    either sign and zeros instead of NaN (so a comparison with any threshold, and a test for zero, comes out mixed
    where NaN's is all false, or all true for !=), the complement of the integer pattern and zeros, False instead
    of True. A replay run under it tells outputs that depend on such memory (stale on the device) from outputs that
    do not."""
    active = False

    def __enter__(self) -> 'AlternateFill':
        AlternateFill.active = True
        return self

    def __exit__(self, *exc: Any) -> None:
        AlternateFill.active = False


def _bit_pattern(bits: int, storage: np.dtype) -> Any:
    """`bits`, cut to the element size of integer `storage`, as a value of it."""
    return np.array(bits & ((1 << (8 * storage.itemsize)) - 1), np.uint64).astype(storage)


def uninitialized_integer(storage: np.dtype) -> Any:
    """The value an element of integer `storage` holds as uninitialized memory in the simulator (the usual fill)."""
    return _bit_pattern(UNINITIALIZED_BITS, storage)


def uninitialized_integers(n: int, storage: np.dtype) -> np.ndarray:
    """`n` elements of integer `storage` as uninitialized memory in the simulator."""
    if not AlternateFill.active:
        return np.full(n, uninitialized_integer(storage), storage)
    return np.array([_bit_pattern(~UNINITIALIZED_BITS, storage), 0], storage)[np.arange(n) % 2]


def uninitialized_float(n: int, storage: np.dtype) -> np.ndarray:
    """`n` elements of float `storage` as uninitialized memory in the simulator."""
    if not AlternateFill.active:
        return np.full(n, np.nan, storage)
    big = np.finfo(storage).max / 2
    return np.array([-big, big, 0.0], storage)[np.arange(n) % 3]


def to_storage(values: Any, storage: np.dtype) -> np.ndarray:
    """values cast to a storage dtype; float to integer saturates at the integer's range. NaN, which the simulator
    puts in float memory that no instruction wrote (stale data on the device), gives the integer fill of such
    memory, not 0: an exact 0 made a stale tile, converted to int32 and back, a clean zero accumulator."""
    values = np.asarray(values)
    if storage.kind in 'iu' and values.dtype.kind == 'f':
        info = np.iinfo(storage)
        wide = values.astype(np.float64)
        nan = np.isnan(wide)
        wide = np.nan_to_num(wide, nan=0.0, posinf=float(info.max), neginf=float(info.min))
        result = np.clip(wide, info.min, info.max).astype(storage)
        if nan.any():
            result[nan] = uninitialized_integer(storage)
        return result
    return values.astype(storage)


def write_in_format(out: np.ndarray, values: Any, kind: 'Kind', where: Any = None) -> None:
    """Write `values` into `out` (storage of a tensor of `kind`) as any write to that tensor is: converted to the
    storage dtype (float to integer saturating, to_storage), then rounded to the format (bfloat16, tfloat32, fp8).
    `where`: only those elements are written (the others keep what they held, unrounded)."""
    converted = to_storage(values, out.dtype)       # a new array: rounded in place
    if kind.rounding is not None:
        kind.rounding(converted)
    if where is None:
        out[...] = converted
    else:
        np.copyto(out, converted, where=where)


def value_in_format(value: Any, kind: 'Kind') -> Any:
    """A fill value (nl.full, nl.zeros) as the tensor of `kind` holds it: converted and rounded as a write is."""
    held = np.empty(1, kind.storage)
    write_in_format(held, np.asarray([value]), kind)
    return held[0].item()


class LowPrecisionType:
    """A dtype numpy does not provide; instances are the values of nl.bfloat16 and friends.

    `np.dtype(nl.bfloat16)` is a one-field record dtype of float32 storage named and tagged after the type
    (metadata {'nki': name}), which `kind_of` maps back; as a record it compares unequal to float32 and to the
    other formats, so `t.dtype == nl.bfloat16` is False for a float32 tensor (a plain float32 dtype with metadata
    would compare equal: numpy ignores metadata in ==). `.min`/`.max` are the format's finite limits."""

    def __init__(self, name, itemsize, limit):
        self.name = name
        self.itemsize = itemsize
        self.max = limit
        self.min = -limit
        self.dtype = np.dtype([(name, np.float32)], metadata={'nki': name})

    def __repr__(self):
        return self.name


class _NumpyScalarDType(type):
    """The metaclass of nl.float32, nl.int32, ... (`numpy_scalar_dtype`): as values they compare, hash and print as
    the numpy dtype they stand for."""
    numpy_dtype: np.dtype

    def __eq__(cls, other: Any) -> bool:
        return bool(cls.numpy_dtype == other)

    def __hash__(cls) -> int:
        return hash(cls.numpy_dtype)

    def __repr__(cls) -> str:
        return repr(cls.numpy_dtype)

    def __str__(cls) -> str:
        return str(cls.numpy_dtype)


def numpy_scalar_dtype(scalar_type: Any, on_call: Any) -> Any:
    """nl.float32, nl.int32, nl.bool_ ...: NKI Beta 1's `neuronxcc.nki.language` defines them as numpy's scalar
    types (`float32 = np.float32`, "Same as numpy.float32"), so a Beta 1 kernel may write `nl.float32(1.0)`; the API
    pages and the NKI Library use them as dtypes whose str() is the name ('float32', as Beta 2's
    `nki.language.float32 = 'float32'`). The class returned is both: a subclass of the numpy scalar type that, called,
    returns the plain numpy scalar once `on_call(name)` has not refused the call, and, as a value, equal and
    hash-equal to the numpy dtype (`t.dtype == nl.float32`, dict keys), printed as it (str 'float32'), with its
    itemsize, name, kind and char; np.dtype() of it is the numpy dtype."""
    numpy_dtype = np.dtype(scalar_type)

    def construct(cls: Any, *args: Any, **kwargs: Any) -> Any:
        on_call(numpy_dtype.name)
        return scalar_type(*args, **kwargs)

    namespace = {'numpy_dtype': numpy_dtype, '__new__': construct, '__slots__': (),
                 'itemsize': numpy_dtype.itemsize, 'name': numpy_dtype.name, 'kind': numpy_dtype.kind,
                 'char': numpy_dtype.char}
    return _NumpyScalarDType(numpy_dtype.name, (scalar_type,), namespace)


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
float8_e4m3fn = LowPrecisionType('float8_e4m3fn', 1, 448.0)
LOW_PRECISION = {t.name: t for t in (bfloat16, tfloat32, float8_e4m3, float8_e5m2, float8_e4m3fn)}


class PackedMxType:
    """nl.float8_e4m3fn_x4 and the other packed MX dtypes: a kernel may name and compare them (the NKI Library's
    dtype-size tables and quantization checks list them beside float32), but MX formats are not modelled, so any
    use as a dtype (`kind_of`: an allocation, a cast, a dtype= argument) is a CompileError naming that cause."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


MX_DTYPES = {name: PackedMxType(name) for name in ('float8_e4m3fn_x4', 'float8_e5m2_x4', 'float4_e2m1fn_x4')}


class Kind:
    """Storage dtype plus hardware element size of one kernel-facing dtype; `rounding` (None for numpy dtypes)
    rounds float32 storage to the format's precision in place."""
    __slots__ = ('public', 'storage', 'itemsize', 'rounding', 'engine_format')

    def __init__(self, public, storage, itemsize, rounding=None):
        self.public = public
        self.storage = storage
        self.itemsize = itemsize
        self.rounding = rounding
        # a format of the NKI data type table, which on-chip tensors may hold (see check_on_chip)
        self.engine_format = rounding is not None or storage in ENGINE_FORMATS


# The numpy formats of the NKI "Supported Data Types" table (nki.api.shared: uint8, int8, uint16, int16, uint32,
# int32, float16, float32, bool; the others have no numpy form and are LowPrecisionType kinds). No engine computes
# in float64, int64, uint64 or a complex format.
ENGINE_FORMATS = frozenset(np.dtype(name) for name in ('bool', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32',
                                                         'float16', 'float32'))


def check_on_chip(kind: 'Kind') -> None:
    """Refuse a tensor the kernel declares (SBUF, PSUM, HBM) or an instruction result in a format outside the NKI
    data type table (a float64 tile computed a kernel's sums more exactly than any NeuronCore engine can; a DMA
    accumulating into a float64 HBM tensor likewise)."""
    if not kind.engine_format:
        raise CompileError(f'dtype {kind.public}: not an NKI data type (the supported formats are uint8, int8, '
                           f'uint16, int16, uint32, int32, float8, float16, bfloat16, tfloat32, float32 and bool)')


_KINDS: Dict[Any, Kind] = {}


def kind_of(dtype: Any) -> Kind:
    """Normalise any accepted dtype spelling to its Kind (cached)."""
    tag = dtype.metadata.get('nki') if isinstance(dtype, np.dtype) and dtype.metadata else None
    if tag in LOW_PRECISION:          # np.dtype(nl.bfloat16), see LowPrecisionType
        return kind_of(LOW_PRECISION[tag])
    if isinstance(dtype, str) and dtype in LOW_PRECISION:     # a dtype by name, dtype="bfloat16" (Beta 2 examples)
        return kind_of(LOW_PRECISION[dtype])
    try:
        return _KINDS[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, NumericType):
        return kind_of(dtype.dtype)
    if isinstance(dtype, PackedMxType) or isinstance(dtype, str) and dtype in MX_DTYPES:
        raise CompileError(f'dtype {dtype}: {not_modelled_cause(str(dtype))}')
    if isinstance(dtype, LowPrecisionType):
        kind = Kind(dtype, np.dtype(np.float32), dtype.itemsize, _ROUNDING[dtype.name])
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


def _round_to_format(array: np.ndarray, mantissa_bits: int, min_exponent: int, largest: float) -> np.ndarray:
    """Round float32 values in place to a float format with `mantissa_bits` stored mantissa bits, normal numbers
    from 2**min_exponent (subnormals below, in steps of 2**(min_exponent - mantissa_bits)), ties to even, and
    saturation at `largest`."""
    with np.errstate(invalid='ignore', over='ignore'):
        magnitude = np.abs(array)
        exponent = np.floor(np.log2(np.maximum(magnitude, np.float32(2.0 ** min_exponent))))
        step = np.exp2(exponent - mantissa_bits)
        rounded = np.minimum(np.round(magnitude / step) * step, largest)
        np.copyto(array, np.where(np.isfinite(array), np.copysign(rounded, array), array), casting='unsafe')
    return array


def round_to_tf32(array: np.ndarray) -> np.ndarray:
    bits = array.view(np.uint32)
    bits += np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))
    bits &= np.uint32(0xFFFFE000)
    return array


def round_to_fp8_e4m3(array: np.ndarray) -> np.ndarray:
    return _round_to_format(array, 3, -6, 240.0)


def round_to_fp8_e5m2(array: np.ndarray) -> np.ndarray:
    return _round_to_format(array, 2, -14, 57344.0)


def round_to_fp8_e4m3fn(array: np.ndarray) -> np.ndarray:
    return _round_to_format(array, 3, -6, 448.0)


_ROUNDING = {'bfloat16': round_to_bf16, 'tfloat32': round_to_tf32, 'float8_e4m3': round_to_fp8_e4m3,
             'float8_e5m2': round_to_fp8_e5m2, 'float8_e4m3fn': round_to_fp8_e4m3fn}


# ----- bit patterns (bitcasts between element sizes, t.view(dtype)) -----
def _e4m3_table(finite: bool = False) -> np.ndarray:
    """The value of each float8_e4m3 bit pattern (bias 7, 3 mantissa bits, subnormals; exponent field 15 is
    infinity or NaN, so 240 is the largest finite value, as the rounding above saturates). With `finite`, the OCP
    float8_e4m3fn: exponent field 15 holds normal numbers up to 448 and only the all-ones mantissa is NaN. A NaN
    pattern decodes to a float32 NaN carrying the pattern in its low byte (0x7FC000xx, sign bit as the pattern's),
    so that encoding it again gives the same byte."""
    codes = np.arange(256)
    exponent = (codes >> 3) & 0xF
    mantissa = (codes & 7).astype(np.float64)
    magnitude = np.where(exponent == 0, mantissa * 2.0 ** -9, (1 + mantissa / 8) * np.exp2(exponent - 7.0))
    if not finite:
        magnitude = np.where(exponent == 15, np.inf, magnitude)
    table = np.where(codes >= 128, -magnitude, magnitude).astype(np.float32)
    nan = (exponent == 15) & (mantissa == 7) if finite else (exponent == 15) & (mantissa > 0)
    bits = table.view(np.uint32)
    bits[nan] = np.uint32(0x7FC00000) | codes[nan].astype(np.uint32) | \
        np.where(codes[nan] >= 128, np.uint32(0x80000000), np.uint32(0))
    return table


_E4M3 = _e4m3_table()
_E4M3_FINITE = _E4M3[:0x78]         # the non-negative finite values, ascending with their codes
_E4M3FN = _e4m3_table(finite=True)
_E4M3FN_FINITE = _E4M3FN[:0x7F]


def _e4m3_codes(values: np.ndarray, finite: bool = False) -> np.ndarray:
    """The e4m3 (or, with `finite`, e4m3fn) codes of values on the format's grid; e4m3fn has no infinity, so an
    infinite value gets its NaN code."""
    magnitude = np.abs(values)
    table = _E4M3FN_FINITE if finite else _E4M3_FINITE
    codes = np.searchsorted(table, np.where(np.isfinite(magnitude), magnitude, 0)).astype(np.uint8)
    bits = values.view(np.uint32)
    carried = (bits & np.uint32(0x7FFFFF00)) == np.uint32(0x7FC00000)       # a NaN decoded from a pattern
    nan_codes = np.where(carried, (bits & np.uint32(0x7F)).astype(np.uint8) | np.uint8(0x78), np.uint8(0x7F))
    if finite:
        nan_codes = np.full_like(nan_codes, 0x7F)
    infinite = np.uint8(0x7F if finite else 0x78)
    codes = np.where(np.isinf(magnitude), infinite, np.where(np.isnan(magnitude), nan_codes, codes))
    return (codes | (np.signbit(values).astype(np.uint8) << 7)).astype(np.uint8)


def to_bytes(values: np.ndarray, kind: Kind) -> np.ndarray:
    """The little-endian bit patterns of `values` (a flat array of `kind`'s storage) in `kind`'s format, as uint8:
    `kind.itemsize` bytes per element. Exact for values of the format (storage rounded to it)."""
    name = getattr(kind.public, 'name', None)
    if kind.rounding is not None:
        values = kind.rounding(np.array(values, np.float32))     # on the grid (it already is: idempotent)
    if name == 'bfloat16':
        return (values.view(np.uint32) >> np.uint32(16)).astype(np.uint16).view(np.uint8)
    if name == 'float8_e5m2':        # the upper byte of the float16 of the same value
        return (values.astype(np.float16).view(np.uint16) >> np.uint16(8)).astype(np.uint8)
    if name == 'float8_e4m3':
        return _e4m3_codes(values)
    if name == 'float8_e4m3fn':
        return _e4m3_codes(values, finite=True)
    return np.ascontiguousarray(values, kind.storage).view(np.uint8)     # numpy formats, tfloat32 (float32 bits)


def from_bytes(raw: np.ndarray, kind: Kind) -> np.ndarray:
    """The inverse of `to_bytes`: uint8 bit patterns read as `kind`'s format, in its storage dtype (any pattern,
    including the format's infinities and NaNs)."""
    name = getattr(kind.public, 'name', None)
    raw = np.ascontiguousarray(raw, np.uint8)
    if name == 'bfloat16':
        return (raw.view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    if name == 'float8_e5m2':
        return (raw.astype(np.uint16) << np.uint16(8)).view(np.float16).astype(np.float32)
    if name == 'float8_e4m3':
        return _E4M3[raw]
    if name == 'float8_e4m3fn':
        return _E4M3FN[raw]
    return raw.view(kind.storage).copy()
