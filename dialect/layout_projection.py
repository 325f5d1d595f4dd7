"""Layout projections and legality: what a layout becomes on another value.

- `legalize`: fit a candidate layout onto one dim of one value (axes already used by the
  value's other dims cut the list; then the longest prefix whose size divides the dim).
- `merge_layouts` / `merge_prefix` / `split_layout`: carry a layout across a reshape group,
  row-major: the merged dim is split over the concatenated axes when every dim before the
  last split one is split completely (`merge_layouts`, exact, or None); `merge_prefix` keeps
  the contiguous part of a split that is not; a merged layout splits onto the dims from major
  to minor.
- `reshape_groups`: the runs of dims a reshape maps onto each other.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

Axes = tuple[str, ...]


def axes_size(axes: Axes, mesh: dict[str, int]) -> int:
    return math.prod(mesh[a] for a in axes)


def divisible_prefix(axes: Axes, size: int, mesh: dict[str, int]) -> Axes:
    """The longest prefix of `axes` whose product divides `size` (the documented fallback
    for a propagated split that does not divide)."""
    out: list[str] = []
    for a in axes:
        if size % (axes_size(tuple(out), mesh) * mesh[a]):
            break
        out.append(a)
    return tuple(out)


def legalize(axes: Axes, size: int, used: set[str], mesh: dict[str, int]) -> Axes:
    """`axes` cut before the first axis in `used`, then to its longest dividing prefix."""
    kept: list[str] = []
    for a in axes:
        if a in used or a not in mesh:
            break
        kept.append(a)
    return divisible_prefix(tuple(kept), size, mesh)


def merge_layouts(sizes: list[int], layouts: list[Axes], mesh: dict[str, int]) -> Axes | None:
    """The layout of the row-major merge of dims, or None when a device's part would not be
    one contiguous block: every dim before the last split one must be split completely
    (an unsplit major dim before a split minor one gives strided parts)."""
    split = [i for i, axes in enumerate(layouts) if axes]
    if not split:
        return ()
    if any(axes_size(layouts[i], mesh) != sizes[i] for i in range(split[-1])):
        return None
    return tuple(a for axes in layouts for a in axes)


def merge_prefix(sizes: list[int], layouts: list[Axes], mesh: dict[str, int]) -> Axes:
    """The longest split of the merged dim that the parts' layouts give contiguously: axes
    of dims split completely, then those of the first dim split only partly; the minor dims'
    axes after it are dropped (they would need a gather)."""
    out: list[str] = []
    for size, axes in zip(sizes, layouts):
        out += axes
        if axes_size(axes, mesh) != size:
            break
    return tuple(out)


def split_layout(axes: Axes, sizes: list[int], mesh: dict[str, int]) -> list[Axes]:
    """Distribute a merged dim's axes onto its parts, major to minor. An axis that does not
    fit (the part is not yet fully split and the axis does not divide it) ends the
    distribution: the rest is dropped (replicated), the documented fallback."""
    out: list[list[str]] = [[] for _ in sizes]
    part = 0
    for a in axes:
        while part < len(sizes) and axes_size(tuple(out[part]), mesh) == sizes[part] and sizes[part] > 1:
            part += 1
        while part < len(sizes) and sizes[part] == 1:
            part += 1
        if part == len(sizes):
            break
        have = axes_size(tuple(out[part]), mesh)
        if sizes[part] % (have * mesh[a]):
            break
        out[part].append(a)
    return [tuple(o) for o in out]


@dataclass
class ReshapeGroup:
    """Operand dims whose row-major merge equals the merge of these result dims."""

    operand: int
    operand_dims: list[str]
    result: int
    result_dims: list[str]


def reshape_groups(src, dst, src_id: int, dst_id: int) -> list[ReshapeGroup]:
    """Split both shapes into minimal runs of dims with equal element counts (row-major)."""
    groups, i, j = [], 0, 0
    while i < src.rank or j < dst.rank:
        a, b, count_a, count_b = [], [], 1, 1
        if i < src.rank:
            a, count_a, i = [src.names[i]], src.shape[i], i + 1
        if j < dst.rank:
            b, count_b, j = [dst.names[j]], dst.shape[j], j + 1
        while count_a != count_b:
            if count_a < count_b and i < src.rank:
                a.append(src.names[i])
                count_a, i = count_a * src.shape[i], i + 1
            elif count_b < count_a and j < dst.rank:
                b.append(dst.names[j])
                count_b, j = count_b * dst.shape[j], j + 1
            else:  # unreachable for verified reshapes (equal element counts)
                break
        groups.append(ReshapeGroup(src_id, a, dst_id, b))
    return groups
