"""Where the running device sits, computed in the per-device program from `partition_id`.

Coordinate of axis `a`: `(partition_id / stride(a)) % size(a)` (docs/partitioning.md);
the block of a dim split over `(a1, ..., ak)`: mixed radix of those coordinates, major to
minor; its first global index: block * local size. All are i32 scalars, emitted once per
program (the Builder caches them).
"""
from __future__ import annotations

from meshir.dialect.mesh import Mesh
from meshir.dialect.tensor_type import TensorType

from . import builder as hlo
from .groups import stride
from .types import Local

INDEX = "i32"


def coordinate(b: hlo.Builder, mesh: Mesh, axis: str) -> Local:
    """The device's coordinate along `axis`."""

    def make():
        size, step = mesh.shape[axis], stride(mesh, axis)
        if size == 1:
            return hlo.constant(b, 0, INDEX)
        c = hlo.partition_id(b)
        if step != 1:
            c = hlo.binary(b, "divide", c, hlo.constant(b, step, "ui32"))
        if step * size != mesh.size:
            c = hlo.binary(b, "remainder", c, hlo.constant(b, size, "ui32"))
        return hlo.convert(b, c, INDEX)

    return b.cached(("coordinate", axis), make)


def block_index(b: hlo.Builder, mesh: Mesh, axes) -> Local:
    """The block number of a dim split over `axes` (0 when `axes` is empty)."""
    axes = tuple(axes)

    def make():
        if not axes:
            return hlo.constant(b, 0, INDEX)
        index = coordinate(b, mesh, axes[0])
        for a in axes[1:]:
            scaled = hlo.binary(b, "multiply", index, hlo.constant(b, mesh.shape[a], INDEX))
            index = hlo.binary(b, "add", scaled, coordinate(b, mesh, a))
        return index

    return b.cached(("block", axes), make)


def block_offset(b: hlo.Builder, mesh: Mesh, axes, block_size: int) -> Local:
    """The first global index of the device's block (blocks of `block_size` over `axes`)."""
    axes = tuple(axes)

    def make():
        index = block_index(b, mesh, axes)
        if not axes or block_size == 1:
            return index
        return hlo.binary(b, "multiply", index, hlo.constant(b, block_size, INDEX))

    return b.cached(("offset", axes, block_size), make)


def dim_offsets(b: hlo.Builder, mesh: Mesh | None, t: TensorType) -> list[Local]:
    """The first global index of the device's shard along every dim of `t`."""
    if mesh is None:
        return [hlo.constant(b, 0, INDEX) for _ in t.dims]
    local = t.local_shape(mesh.shape)
    return [block_offset(b, mesh, d.axes or (), n) for d, n in zip(t.dims, local)]


def is_split(t: TensorType) -> bool:
    """True when some dim of `t` is split (its shard differs between devices)."""
    return any(d.axes for d in t.dims)
