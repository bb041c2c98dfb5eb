"""Write races between the programs of an SPMD launch.

The programs of a launch grid are instances of one kernel that the device runs in no fixed order: with nl.nc(2) on
two physical NeuronCores at once, otherwise as the compiler distributes them (nki.language.nc). The simulator runs
them one after the other, so when two programs write the same HBM element, the last one in its order always wins,
while on the device either may. `WriteRaces` keeps, for each shared HBM tensor a program writes, which program
wrote each element last and the value it wrote; a later write of that element by another program with a different
value raises WriteRaceError (verdict INCORRECT), and so does a read of an element another program wrote (the device
may run the read first). Writing the same value again is no race (every program storing a common result), nor are
read-modify-write adds of several programs into one element (dma_copy with dst_rmw_op, dma_compute into its own
source), which accumulate atomically in any order; an add onto another program's store is. Scatters through index
tiles are not tracked.
"""
from typing import Any, Dict, Tuple

import numpy as np

from . import memory
from .errors import WriteRaceError
from .indirect import IndirectView


class WriteRaces:
    """Last writer (program number) and value of each element of the shared HBM tensors a launch writes."""

    def __init__(self) -> None:
        self.active = False                               # inside a launch (between its first program and its end)
        self.synchronized = False                         # the launch has a barrier between its cores (core_barrier)
        self.numbers: Dict[Tuple[int, ...], int] = {}     # program ids -> program number, in order of first write
        self.writers: Dict[int, np.ndarray] = {}          # HBM alloc serial -> program number per element (-1: none)
        self.values: Dict[int, np.ndarray] = {}           # HBM alloc serial -> the value that program wrote
        self.added: Dict[int, np.ndarray] = {}            # HBM alloc serial -> was that write a read-modify-write add

    def start_launch(self) -> None:
        """A launch's first program starts: writes before it were ordered before every program of the launch."""
        self.active = True
        self.synchronized = False
        self.numbers.clear()
        self.writers.clear()
        self.values.clear()
        self.added.clear()

    def end_launch(self) -> None:
        """The launch is over: the launching code's writes come after all of its programs."""
        self.start_launch()
        self.active = False

    def barrier(self) -> None:
        """A barrier between the launch's cores: a program may then read what another wrote before it. Programs
        run one after the other here, so which writes a barrier orders is unknown: reads go unchecked from then on
        in this launch."""
        self.synchronized = True

    def read(self, view: Any, window: Any, program_ids: Tuple[int, ...], line: int) -> None:
        """Program `program_ids` reads `view`: raise WriteRaceError if another program of the launch wrote one of
        its elements (the device may run the read first), unless the launch synchronizes its cores."""
        tensor = view.tensor
        if not self.active or self.synchronized or tensor.buffer is not memory.shared_hbm or \
                isinstance(view, IndirectView):
            return
        writers = self.writers.get(tensor.hbm_alloc.serial) if tensor.hbm_alloc is not None else None
        if writers is None:
            return
        me = self.numbers.setdefault(program_ids, len(self.numbers))
        written = view.array_over(writers, window)
        others = (written >= 0) & (written != me)
        if others.any():
            first, other = self._first(others, written)
            raise WriteRaceError(
                f'a race between the programs of the launch: program {list(program_ids)} reads '
                f'{int(others.sum())} element(s) of the HBM tensor{_named(tensor)} of shape {list(tensor.shape)} that '
                f'program {list(other)} wrote (first at {list(first)} of the tile read). The programs of a launch run '
                f'in no fixed order on the device (on two NeuronCores at once with nl.nc(2)), so the read may come '
                f'first; pass data between programs through separate launches', line)

    def write(self, dst: Any, window: Any, program_ids: Tuple[int, ...], line: int, where: Any = None,
              added: bool = False) -> None:
        """Program `program_ids` wrote `dst` (under `window`, and only where the elementwise mask `where` holds,
        if given; `added`: a read-modify-write add); raise WriteRaceError if it overwrote an element another program
        of the launch wrote with a different value, or added to one another program stored (an add and a store give
        different results in either order; two adds do not)."""
        tensor = dst.tensor
        if not self.active or tensor.buffer is not memory.shared_hbm or isinstance(dst, IndirectView):
            return
        alloc = tensor.hbm_alloc
        if alloc.data is None:
            return
        me = self.numbers.setdefault(program_ids, len(self.numbers))
        writers = self.writers.get(alloc.serial)
        if writers is None:
            writers = self.writers[alloc.serial] = np.full(alloc.data.shape, -1, np.int32)
            self.values[alloc.serial] = np.empty_like(alloc.data)
            self.added[alloc.serial] = np.zeros(alloc.data.shape, bool)
        written = dst.array_over(writers, window)
        before = dst.array_over(self.values[alloc.serial], window)
        was_added = dst.array_over(self.added[alloc.serial], window)
        now = dst.array_over(alloc.data, window)
        others = (written >= 0) & (written != me)
        if where is not None:
            others &= where
        if others.any():
            if added:       # onto another program's store
                raced = others & ~was_added
            else:
                same = now == before
                if now.dtype.kind in 'fc':
                    same |= np.isnan(now) & np.isnan(before)
                raced = others & ~same
            if raced.any():
                first, other = self._first(raced, written)
                raise WriteRaceError(
                    f'a write race between the programs of the launch: program {list(program_ids)} overwrites '
                    f'{int(raced.sum())} element(s) of the HBM tensor{_named(tensor)} of shape {list(tensor.shape)} '
                    f'that program {list(other)} wrote with different values (at {list(first)} of the written tile: '
                    f'{before[first]!r}, then {now[first]!r}). The programs of a launch run in no fixed order on the '
                    f'device (on two NeuronCores at once with nl.nc(2)), so which value remains depends on which '
                    f'program writes last; write disjoint parts of the output per program (nl.program_id), or '
                    f'accumulate with dma_copy(dst_rmw_op=nl.add)', line)
        mask = ... if where is None else where
        written[mask] = me
        before[mask] = now[mask]
        was_added[mask] = added

    def _first(self, mask: np.ndarray, written: np.ndarray) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """The index of the first element `mask` holds at, and the ids of the program that wrote it."""
        first = tuple(int(i) for i in np.argwhere(mask)[0])
        return first, next(ids for ids, number in self.numbers.items() if number == written[first])


def _named(tensor: Any) -> str:
    return f' {tensor.name!r}' if tensor.name else ''
