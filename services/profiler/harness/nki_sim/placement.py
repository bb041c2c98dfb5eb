"""Direct allocation: where the logical blocks of an on-chip tensor live when the kernel places them itself
(`buffer=ncc.sbuf.mod_alloc(...)`, `ncc.sbuf.alloc(func)`, `ncc.psum.mod_alloc(...)` / `alloc(func)`,
`nl.ndarray(..., address=(partition, byte))`), and the one consequence the simulator checks.

The simulator gives every tensor its own storage. On the device, tensors placed at overlapping addresses share
their bytes: after tensor U writes bytes that tensor T wrote, T reads U's data. A kernel that relies on its own
storage (T written, U written over it, T read) computes something else on the device than here, so that read
raises AliasedReadError (an INCORRECT verdict naming both tensors and lines). Reusing an address once a tensor is
no longer read is the point of direct allocation and passes. Blocks of one tensor that the modulo placement puts at
the same address (`num_free_tiles` smaller than the block count) count as different tensors.

Addresses follow the nki.compiler API pages: a block with index `idx` of a tensor with `pdim` partitions and
`fbytes` bytes per partition starts at partition `base_partition + linear(idx mod num_par_tiles) * pdim` and byte
`base_addr + linear(idx mod num_free_tiles) * fbytes` (an empty tile count places every block at the base); PSUM
adds `(base_bank + linear(idx mod num_bank_tiles)) * 2 KiB`. `address=` places the blocks one after another.
"""
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import memory
from .errors import AliasedReadError, CompileError

PSUM_BANK_BYTES = 2048
# (first partition, end partition, first byte, end byte) of a partition-by-byte rectangle
Rect = Tuple[int, int, int, int]


def _linear(shape: Sequence[int], indices: Sequence[int]) -> int:
    value = 0
    for size, index in zip(shape, indices):
        value = value * size + index
    return value


def _modulo(base: int, tiles: Sequence[int], scale: int, block: Sequence[int]) -> int:
    shape = tuple(tiles) if tiles else (1,) * len(block)
    return base + _linear(shape, [i % s for i, s in zip(block, shape)]) * scale


def _ints(value: Any, what: str) -> Tuple[int, ...]:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise CompileError(f'{what}={value!r}: expected a tuple of positive integers')
    return values


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CompileError(f'{what}={value!r}: expected a non-negative integer')
    return value


class Placement:
    """A direct-allocation request, passed as a tensor's `buffer`: the memory (`buffer`) and where each block goes
    (`locate(block, pdim, fbytes) -> (first partition, first byte)`)."""

    def __init__(self, buffer: memory.Buffer, locate: Callable[[Tuple[int, ...], int, int], Tuple[int, int]],
                 how: str) -> None:
        self.buffer = buffer
        self.locate = locate
        self.how = how

    def __repr__(self) -> str:
        return self.how


def sbuf_mod_alloc(base_addr: Any = 0, *, base_partition: Any = 0, num_par_tiles: Any = (),
                   num_free_tiles: Any = ()) -> Placement:
    base, partition = _int(base_addr, 'base_addr'), _int(base_partition, 'base_partition')
    par_tiles = _ints(num_par_tiles, 'num_par_tiles') if num_par_tiles != () else ()
    free_tiles = _ints(num_free_tiles, 'num_free_tiles') if num_free_tiles != () else ()
    return Placement(memory.sbuf, lambda block, pdim, fbytes: (_modulo(partition, par_tiles, pdim, block),
                                                                _modulo(base, free_tiles, fbytes, block)),
                     'ncc.sbuf.mod_alloc')


def psum_mod_alloc(*, base_bank: Any = 0, base_addr: Any = 0, base_partition: Any = 0, num_bank_tiles: Any = (),
                   num_par_tiles: Any = (), num_free_tiles: Any = ()) -> Placement:
    bank, base = _int(base_bank, 'base_bank'), _int(base_addr, 'base_addr')
    partition = _int(base_partition, 'base_partition')
    bank_tiles = _ints(num_bank_tiles, 'num_bank_tiles') if num_bank_tiles != () else ()
    par_tiles = _ints(num_par_tiles, 'num_par_tiles') if num_par_tiles != () else ()
    free_tiles = _ints(num_free_tiles, 'num_free_tiles') if num_free_tiles != () else ()
    return Placement(memory.psum, lambda block, pdim, fbytes: (
        _modulo(partition, par_tiles, pdim, block),
        _modulo(bank, bank_tiles, 1, block) * PSUM_BANK_BYTES + _modulo(base, free_tiles, fbytes, block)),
        'ncc.psum.mod_alloc')


def custom_alloc(buffer: memory.Buffer, func: Any) -> Placement:
    """`ncc.sbuf.alloc(func)` / `ncc.psum.alloc(func)`: func(idx=block index, pdim_size=partitions,
    fdim_size=bytes per partition), by keyword as the API pages name them (a function taking them by position is
    called so), gives (first partition, first byte) of each block, or for PSUM (bank, partition, byte)."""
    if not callable(func):
        raise CompileError(f'ncc.{buffer.name}.alloc({func!r}): expected a function of (block index, partitions, '
                           'bytes per partition)')

    def locate(block: Tuple[int, ...], pdim: int, fbytes: int) -> Tuple[int, int]:
        try:
            where = func(idx=tuple(block), pdim_size=pdim, fdim_size=fbytes)
        except TypeError as by_keyword:
            try:
                where = func(tuple(block), pdim, fbytes)
            except TypeError:
                raise by_keyword from None
        if isinstance(where, (tuple, list)) and len(where) == 3:
            bank, partition, byte = where
            return _int(partition, 'partition'), _int(bank, 'bank') * PSUM_BANK_BYTES + _int(byte, 'byte')
        if not isinstance(where, (tuple, list)) or len(where) != 2:
            raise CompileError(f'ncc.{buffer.name}.alloc: the allocation function returned {where!r}, not '
                               '(partition, byte address)')
        return _int(where[0], 'partition'), _int(where[1], 'byte address')
    return Placement(buffer, locate, f'ncc.{buffer.name}.alloc')


def at_address(buffer: memory.Buffer, partition: int, byte: int, block_shape: Tuple[int, ...]) -> Placement:
    """`nl.ndarray(..., address=(partition, byte))`: the blocks one after another from that byte."""
    return Placement(buffer, lambda block, pdim, fbytes: (partition, byte + _linear(block_shape, block) * fbytes),
                     'address=')


class _Owner:
    """One placed block: the tensor, its block index, its first partition and byte, and what messages call it."""
    __slots__ = ('tensor', 'origin', 'label')

    def __init__(self, tensor: Any, block: Tuple[int, ...], placement: Placement) -> None:
        self.tensor = tensor
        self.origin = placement.locate(block, tensor.parts, tensor.free * tensor.kind.itemsize)
        name = f'tensor {tensor.name!r}' if tensor.name else f'the {tensor.buffer.name.upper()} tensor'
        self.label = f'{name} declared at line {tensor.site}{" (block " + str(list(block)) + ")" if block else ""}'


class PlacedMemory:
    """The placed bytes of one run: who wrote each rectangle last, and for each owner the rectangles of its own
    writes that another owner wrote over since (a later write of its own there clears them)."""

    def __init__(self) -> None:
        self.placements: Dict[Any, Placement] = {}
        self.owners: Dict[Tuple[Any, Tuple[int, ...]], _Owner] = {}    # (tensor, block index) -> its owner
        self.last_writer: Dict[str, List[Tuple[Rect, _Owner]]] = {}
        self.clobbered: Dict[_Owner, List[Tuple[Rect, _Owner, int]]] = {}

    def place(self, tensor: Any, placement: Placement) -> None:
        self.placements[tensor] = placement

    def _owner(self, tensor: Any, block: Any) -> _Owner:
        block = tuple(block) if isinstance(block, (tuple, list)) else ()
        owner = self.owners.get((tensor, block))
        if owner is None:
            owner = self.owners[(tensor, block)] = _Owner(tensor, block, self.placements[tensor])
        return owner

    def _located(self, tensor: Any, block: Any, p0: int, p1: int, f0: int, f1: int) -> Tuple[Rect, _Owner]:
        owner = self._owner(tensor, block)
        part, byte = owner.origin
        itemsize = tensor.kind.itemsize
        return (part + p0, part + p1, byte + f0 * itemsize, byte + f1 * itemsize), owner

    def write(self, tensor: Any, block: Any, region: Tuple[Any, ...], line: int) -> None:
        rect, owner = self._located(tensor, block, *region[:4])
        writers = self.last_writer.setdefault(tensor.buffer.name, [])
        kept = []
        for old, other in writers:
            shared = _overlap(old, rect) if other is not owner else None
            if shared is not None:
                self.clobbered.setdefault(other, []).append((shared, owner, line))
            if not _covers(rect, old):
                kept.append((old, other))
        kept.append((rect, owner))
        self.last_writer[tensor.buffer.name] = kept
        mine = self.clobbered.get(owner)
        if mine:
            self.clobbered[owner] = [c for c in mine if not _covers(rect, c[0])]

    def forget(self, tensor: Any, block: Any) -> None:
        """A write through a bitcast view (other element size) of a placed block: what was written over before is
        no longer known to be read, so nothing about the block is flagged."""
        self.clobbered.pop(self._owner(tensor, block), None)

    def read(self, tensor: Any, block: Any, region: Tuple[Any, ...], line: int) -> None:
        rect, owner = self._located(tensor, block, *region[:4])
        for clobbered, other, written_at in self.clobbered.get(owner, ()):
            if _overlap(clobbered, rect) is not None:
                p0, p1, b0, b1 = clobbered
                raise AliasedReadError(
                    f'{owner.label} is read here, but {other.label} wrote over its bytes at line {written_at}: both '
                    f'are placed at {tensor.buffer.name.upper()} partitions {p0}-{p1 - 1}, bytes {b0}-{b1 - 1} by '
                    f'direct allocation ({self.placements[tensor]!r}, {self.placements[other.tensor]!r}), so on the '
                    f'device this read sees the other tensor\'s data; the simulator gives every tensor its own '
                    f'storage and would compute another result. Place them at disjoint addresses, or finish reading '
                    f'one before writing the other', line)


def _overlap(a: Rect, b: Rect) -> Optional[Rect]:
    p0, p1, b0, b1 = max(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), min(a[3], b[3])
    return (p0, p1, b0, b1) if p0 < p1 and b0 < b1 else None


def _covers(outer: Rect, inner: Rect) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1] and outer[2] <= inner[2] and inner[3] <= outer[3]
