"""Bytes each collective sends per device, from the operand's shard (docs/partitioning.md).

Ring algorithms: an all_gather over n devices sends (n-1) shards, an all_reduce 2(n-1)/n of
the shard, a reduce_scatter and an all_to_all (n-1)/n; all_slice sends nothing; a
collective_permute sends the whole shard.
"""
from __future__ import annotations

import math

from meshir.dialect.tensor_type import TensorType


def shard_bytes(t: TensorType, mesh_shape: dict[str, int]) -> int:
    """Bytes of one device's shard of `t`."""
    return math.prod(t.local_shape(mesh_shape)) * t.dtype.itemsize


def group_size(axes, mesh_shape: dict[str, int]) -> int:
    return math.prod(mesh_shape[a] for a in axes)


def ring_bytes(kind: str, shard: int, n: int) -> int:
    """Bytes one device sends for collective `kind` (all_reduce, all_gather, ...; HLO's
    dashed spellings too) over a group of `n` devices, its operand shard being `shard` bytes."""
    kind = kind.replace("-", "_")
    if kind == "all_reduce":
        return 2 * (n - 1) * shard // n
    if kind == "all_gather":
        return (n - 1) * shard
    if kind in ("reduce_scatter", "all_to_all"):
        return (n - 1) * shard // n
    if kind == "collective_permute":
        return shard
    return 0


def collective_bytes(kind: str, operand: TensorType, axes, mesh_shape: dict[str, int]) -> int:
    """Bytes sent per device by collective `kind` over `axes` applied to `operand`."""
    return ring_bytes(kind, shard_bytes(operand, mesh_shape), group_size(axes, mesh_shape))
