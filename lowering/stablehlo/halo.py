"""Halo exchange: a device's shard extended by the boundary rows of its neighbours' blocks.

An op that reads only near each position along a split dim (a shift; later convolution
windows and pooling) computes on its shard extended by `low` rows of the block before and
`high` rows of the block after (dialect/halo.py), instead of gathering the dim whole. Each
device sends its last `low` rows to the next block and its first `high` rows to the previous
one with `collective_permute` (Mesh-TensorFlow's and GSPMD's halo exchange); blocks follow
the dim's axes major to minor, as everywhere in the lowering. At the ends of the dim the
rows are `fill`, or with `wrap` those of the block at the other end.
"""
from __future__ import annotations

import math

from meshir.dialect.mesh import Mesh

from . import builder as hlo
from .collectives import permute
from .device import INDEX, block_index
from .groups import neighbour_pairs
from .types import Local


def extend_with_halos(b: hlo.Builder, mesh: Mesh, x: Local, axis: int, axes, low: int, high: int,
                      fill: float, wrap: bool) -> Local:
    """`x` (the device's block of a dim split over `axes`, along `axis`) with the last `low`
    rows of the block before it prepended and the first `high` rows of the block after it
    appended: `low + n + high` rows, global rows `[start - low, start + n + high)`."""
    n = x.shape[axis]
    parts = [x]
    if low:
        rows = hlo.slice_along(b, x, axis, n - low, n)
        parts.insert(0, _from_neighbour(b, mesh, rows, axes, +1, fill, wrap))
    if high:
        rows = hlo.slice_along(b, x, axis, 0, high)
        parts.append(_from_neighbour(b, mesh, rows, axes, -1, fill, wrap))
    return hlo.concatenate(b, parts, axis)


def _from_neighbour(b: hlo.Builder, mesh: Mesh, rows: Local, axes, step: int, fill: float, wrap: bool) -> Local:
    """Every device sends `rows` to the device `step` blocks further and returns what it
    receives; the blocks at the end with no sender (without `wrap`) get `fill`."""
    pairs = neighbour_pairs(mesh, axes, step, wrap)
    if not pairs:  # one block and no wrap-around: nobody sends
        return hlo.splat_like(b, fill, rows)
    if all(s == t for s, t in pairs):  # one block, wrapping onto itself
        return rows
    received = permute(b, rows, pairs)
    if wrap:
        return received
    edge = 0 if step > 0 else math.prod(mesh.shape[a] for a in axes) - 1
    at_edge = hlo.compare(b, "eq", block_index(b, mesh, axes), hlo.constant(b, edge, INDEX))
    return hlo.select(b, hlo.scalar_to(b, at_edge, rows.shape), hlo.splat_like(b, fill, rows), received)
