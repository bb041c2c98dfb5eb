"""Write races between the programs of an SPMD launch.

The programs of a launch grid are instances of one kernel that the device runs in no fixed order: with nl.nc(2) on
two physical NeuronCores at once, otherwise as the compiler distributes them (nki.language.nc). The simulator runs
them one after the other, so when two programs write the same HBM element, the last one in its order always wins,
while on the device either may. `WriteRaces` keeps, for each shared HBM tensor a program writes, which program
wrote each element last and the value it wrote; a later write of that element by another program with a different
value raises WriteRaceError (verdict INCORRECT). Writing the same value again is no race (every program storing a
common result), nor is a read-modify-write DMA (dma_copy with dst_rmw_op, dma_compute into its own source), which
accumulates atomically in any order. Scatters through index tiles are not tracked.
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
        self.numbers: Dict[Tuple[int, ...], int] = {}     # program ids -> program number, in order of first write
        self.writers: Dict[int, np.ndarray] = {}          # HBM alloc serial -> program number per element (-1: none)
        self.values: Dict[int, np.ndarray] = {}           # HBM alloc serial -> the value that program wrote

    def start_launch(self) -> None:
        """A launch's first program starts: writes before it were ordered before every program of the launch."""
        self.active = True
        self.numbers.clear()
        self.writers.clear()
        self.values.clear()

    def end_launch(self) -> None:
        """The launch is over: the launching code's writes come after all of its programs."""
        self.start_launch()
        self.active = False

    def write(self, dst: Any, window: Any, program_ids: Tuple[int, ...], line: int, where: Any = None) -> None:
        """Program `program_ids` wrote `dst` (under `window`, and only where the elementwise mask `where` holds,
        if given); raise WriteRaceError if it overwrote an element another program of the launch wrote with a
        different value."""
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
        values = self.values[alloc.serial]
        written = dst.array_over(writers, window)
        before = dst.array_over(values, window)
        now = dst.array_over(alloc.data, window)
        others = (written >= 0) & (written != me)
        if where is not None:
            others &= where
        if others.any():
            same = now == before
            if now.dtype.kind in 'fc':
                same |= np.isnan(now) & np.isnan(before)
            raced = others & ~same
            if raced.any():
                raise WriteRaceError(_message(self.numbers, dst, raced, written, before, now, program_ids), line)
        if where is None:
            written[...] = me
            before[...] = now
        else:
            written[where] = me
            before[where] = now[where]


def _message(numbers: Dict[Tuple[int, ...], int], dst: Any, raced: np.ndarray, written: np.ndarray,
             before: np.ndarray, now: np.ndarray, program_ids: Tuple[int, ...]) -> str:
    first = tuple(int(i) for i in np.argwhere(raced)[0])
    other = next(ids for ids, number in numbers.items() if number == written[first])
    name = f' {dst.tensor.name!r}' if dst.tensor.name else ''
    return (f'a write race between the programs of the launch: program {list(program_ids)} overwrites '
            f'{int(raced.sum())} element(s) of the HBM tensor{name} of shape {list(dst.tensor.shape)} that program '
            f'{list(other)} wrote with different values (at {list(first)} of the written tile: {before[first]!r}, '
            f'then {now[first]!r}). The programs of a launch run in no fixed order on the device (on two NeuronCores '
            f'at once with nl.nc(2)), so which value remains depends on which program writes last; write disjoint '
            f'parts of the output per program (nl.program_id), or accumulate with dma_copy(dst_rmw_op=nl.add)')
