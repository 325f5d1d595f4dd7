"""Mesh arithmetic in Python: device coordinates, blocks, replica groups, permutation pairs.

Conventions of docs/partitioning.md: partition id `p` is the row-major index of the mesh
coordinates; a dim split over axes `(a1, ..., ak)` is cut into blocks numbered by those axes'
coordinates, major to minor; the devices of a collective's group differ only in the
collective's axes and are ordered like the blocks of a dim split over those axes (in the
order the collective names them).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from meshir.dialect.mesh import Mesh
from meshir.dialect.tensor_type import TensorType


@functools.lru_cache(maxsize=256)
def _strides(mesh: Mesh) -> dict[str, int]:
    names = mesh.axis_names
    return {a: math.prod(mesh.shape[b] for b in names[i + 1 :]) for i, a in enumerate(names)}


def stride(mesh: Mesh, axis: str) -> int:
    """Product of the sizes of the axes after `axis`: how far apart its coordinates are."""
    return _strides(mesh)[axis]


def coordinates(mesh: Mesh, device: int) -> dict[str, int]:
    """Axis -> coordinate of a partition id."""
    strides = _strides(mesh)
    return {a: (device // strides[a]) % s for a, s in mesh.axes}


def device_id(mesh: Mesh, coords: dict[str, int]) -> int:
    """The partition id at mesh coordinates."""
    return sum(coords[a] * stride(mesh, a) for a in mesh.axis_names)


def block_index(mesh: Mesh, coords: dict[str, int], axes) -> int:
    """The block a device holds of a dim split over `axes` (mixed radix, major to minor)."""
    index = 0
    for a in axes:
        index = index * mesh.shape[a] + coords[a]
    return index


def replica_groups(mesh: Mesh, axes) -> list[list[int]]:
    """Groups of devices that differ only in `axes`, each ordered by the block order of
    `axes`; groups are listed by their first member.

    Vectorized: the ids laid out in the mesh's shape, the group axes moved last (in the
    collective's order) and flattened — row-major order gives both orders at once, so the
    cost stays small on meshes of thousands of devices.
    """
    axes = tuple(axes)
    names = mesh.axis_names
    ids = np.arange(mesh.size).reshape([s for _, s in mesh.axes] or [1])
    outer = [names.index(a) for a in names if a not in axes]
    inner = [names.index(a) for a in axes]
    group_size = math.prod(mesh.shape[a] for a in axes)
    return ids.transpose(outer + inner).reshape(-1, group_size).tolist()


def device_blocks(mesh: Mesh, t: TensorType, device: int) -> tuple:
    """What a device holds of a value: its block of every dim, plus its coordinates on the
    value's pending-partial axes (devices holding different summands hold different data)."""
    c = coordinates(mesh, device)
    return tuple(block_index(mesh, c, d.axes or ()) for d in t.dims) + tuple(c[a] for a in t.partial)


def permute_pairs(mesh: Mesh, src: TensorType, dst: TensorType) -> list[tuple[int, int]]:
    """`(source, target)` pairs moving every device's shard from layout `src` to `dst`.

    Each device receives the data it must hold under `dst` from a device holding it under
    `src`: itself when it already does, otherwise the holders and receivers of one block are
    matched in partition order, which makes the pairs a permutation of all devices.
    """
    holders: dict[tuple, list[int]] = {}
    needers: dict[tuple, list[int]] = {}
    for p in range(mesh.size):
        holders.setdefault(device_blocks(mesh, src, p), []).append(p)
        needers.setdefault(device_blocks(mesh, dst, p), []).append(p)
    pairs = []
    for block, targets in needers.items():
        sources = holders.get(block, [])
        if len(sources) != len(targets):
            raise ValueError(f"no permutation moves {src} to {dst}: block {block} is held by {len(sources)} devices, needed by {len(targets)}")
        same = [p for p in targets if p in sources]
        pairs += [(p, p) for p in same]
        pairs += zip([p for p in sources if p not in same], [p for p in targets if p not in same])
    return sorted(pairs, key=lambda st: st[1])


def neighbour_pairs(mesh: Mesh, axes, step: int, wrap: bool) -> list[tuple[int, int]]:
    """`(source, target)` pairs sending each device's data to the device `step` blocks
    further along a dim split over `axes` (the same coordinates on every other axis). Pairs
    past either end of the dim are dropped, or wrap around to the other end with `wrap`."""
    pairs = []
    for group in replica_groups(mesh, axes):
        n = len(group)
        for j, source in enumerate(group):
            k = (j + step) % n if wrap else j + step
            if 0 <= k < n:
                pairs.append((source, group[k]))
    return sorted(pairs, key=lambda st: st[1])
