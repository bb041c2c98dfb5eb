"""nisa.topk (re-exported by isa as nisa.topk): the GpSimd top-k of each 16-partition group.

The semantics are those of the v2.33.0 API page (nki/api/generated/nki.isa.topk.html): each group of 16 partitions
is one independent problem whose source is read as a "snake" (element s of the group at partition s % 16, free
position s // 16), of which the first `n` elements are active; k is val_dst's free size per partition; the k largest
values (bfloat16) and their positions in the group's snake (uint32) are written in the same snake layout, result j
at partition j % 16, free position j // 16, so only the first ceil(k / 16) free positions are written. The simulator
writes the results in descending order, rank j at snake position j (a public kernel using `sorted=True` relies on
that order; with the default `sorted=False` the page promises no order, so any order is a valid result), ties by
lower position first. The slots of the last written position past k hold values the page does not define: the
simulator leaves them as they were. The latest page (one problem per partition, ascending order) conflicts with
v2.33 and with every public kernel that calls the instruction (8 problems per 128-partition tile), and is not
followed.

One trace instruction per destination (a `select` on the pool engine reading src and that destination, as
nonzero_with_count), as nc_match_replace8 with dst_idx issues one per output.
"""
from typing import Any

import numpy as np

from .compute import assign
from .dtypes import bfloat16, kind_of
from .errors import CompileError
from .operands import on_chip
from .runtime import begin, issue, operand
from .views import View

GROUP = 16              # partitions per problem: one GpSimd core's partitions
BF16 = kind_of(bfloat16)
UINT32 = kind_of(np.uint32)


def _check(values: View, indices: View, source: View, n: int) -> int:
    """The page's constraints; returns k."""
    for view, kind, role in ((source, BF16, 'src'), (values, BF16, 'val_dst'), (indices, UINT32, 'idx_dst')):
        if view.tensor.kind.public != kind.public:
            raise CompileError(f'nisa.topk: {role} must be {kind.public}, got {view.tensor.kind.public}')
        if view.shape[0] % GROUP or len(view.shape) != 2:
            raise CompileError(f'nisa.topk: {role} must be a 2-D tile whose partition dimension is a multiple of '
                               f'{GROUP}, got {view.shape}')
    if not values.shape[0] == indices.shape[0] == source.shape[0]:
        raise CompileError(f'nisa.topk: src, val_dst and idx_dst have {source.shape[0]}, {values.shape[0]} and '
                           f'{indices.shape[0]} partitions')
    k = values.shape[1]
    if indices.shape[1] != k:
        raise CompileError(f'nisa.topk: idx_dst must have the shape of val_dst {values.shape}, got {indices.shape}')
    if not 8 <= n < 65536:
        raise CompileError(f'nisa.topk: n must satisfy 8 <= n < 65536, got {n}')
    if not 1 <= k <= n or k >= 32768:
        raise CompileError(f'nisa.topk: k (val_dst\'s free size, {k}) must satisfy 1 <= k < 32768 and k <= n ({n})')
    if source.shape[1] * GROUP < n:
        raise CompileError(f'nisa.topk: src holds {source.shape[1]} snake positions per partition, fewer than '
                           f'ceil(n / 16) = {-(-n // GROUP)}')
    return k


def _ranked(source: np.ndarray, n: int) -> np.ndarray:
    """Per group, the snake positions of its n active elements from the largest value to the smallest (ties: the
    lower position first): [groups, n]."""
    groups = source.shape[0] // GROUP
    snakes = source.reshape(groups, GROUP, -1).transpose(0, 2, 1).reshape(groups, -1)[:, :n]
    return np.argsort(-snakes.astype(np.float64), axis=1, kind='stable')


def _write(target: View, source: View, k: int, ranked: Any, take: Any) -> None:
    """One instruction writing the first ceil(k / 16) free positions of `target`: result j (take(snake, position)
    of rank j) at partition j % 16, position j // 16 of each group; the slots past k keep their values."""
    run = begin()
    columns = -(-k // GROUP)
    region = target[:, 0:columns]
    result = None
    if run.numerics:
        out = region.array().astype(np.float64)
        groups = out.shape[0] // GROUP
        snakes = source.array().reshape(groups, GROUP, -1).transpose(0, 2, 1).reshape(groups, -1)
        for g in range(groups):
            for j in range(k):
                out[g * GROUP + j % GROUP, j // GROUP] = take(snakes[g], ranked[g, j])
        result = out.astype(target.tensor.kind.storage)
    pending = issue(run, 'select', 'pool', [(source, None), (region, None)], region.shape, target.tensor.kind,
                    result)
    assign(region, pending.tile)


def topk(val_dst: Any, idx_dst: Any, src: Any, n: Any, sorted: Any = False, **kwargs: Any) -> None:
    """The k largest of the first n snake elements of each 16-partition group of src, with their snake positions
    (k = val_dst's free size), written in snake layout into val_dst (bfloat16) and idx_dst (uint32)."""
    source = on_chip(operand(src), 'topk')
    values = on_chip(operand(val_dst), 'topk')
    indices = on_chip(operand(idx_dst), 'topk')
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise CompileError(f'nisa.topk: n must be a compile-time integer, got {type(n).__name__}')
    if not isinstance(sorted, bool):
        raise CompileError(f'nisa.topk: sorted must be a bool, got {type(sorted).__name__}')
    k = _check(values, indices, source, int(n))
    ranked = _ranked(source.array(), int(n)) if begin().numerics else None
    _write(values, source, k, ranked, lambda snake, position: snake[position])
    _write(indices, source, k, ranked, lambda snake, position: position)


setattr(topk, 'beta2_order', ('val_dst', 'idx_dst', 'src', 'n', 'sorted'))
