"""The catalogue: every transformation, in the order `analyze` lists candidates, and the lookup by id."""
from typing import Dict, List

from .base import Transformation
from .batch_psum import BatchPsumEvictions
from .fuse_loops import FuseLoops
from .hoist_load import HoistInvariantLoad
from .hoist_store import HoistInvariantStore
from .interchange_loops import InterchangeLoops
from .move_engine import MoveElementwiseEngine
from .split_loop import SplitLoop
from .vectorize_loop import VectorizeLoop
from .widen_dma import WidenDma

CATALOGUE: List[Transformation] = [HoistInvariantLoad(), HoistInvariantStore(), WidenDma(), SplitLoop(),
                                   InterchangeLoops(), FuseLoops(), MoveElementwiseEngine(), BatchPsumEvictions(),
                                   VectorizeLoop()]
BY_ID: Dict[str, Transformation] = {t.id: t for t in CATALOGUE}
