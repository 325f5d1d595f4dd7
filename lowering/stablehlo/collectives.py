"""The collectives, with replica groups computed from the mesh (groups.py).

Max and min of floats cross the devices as total-order integer keys (total_order.py), so a
NaN on any device wins as it does in jnp.max. Like jax's shard_map: `channel_handle` on each, `use_global_device_ids` where StableHLO
has it (groups are partition ids; there is one replica). all_slice moves no data: each device
keeps its block with a `dynamic_slice`, and as_partial keeps its value on the first device of
each group (a `select` on the device's block index, so NaN and inf stay exact). A collective over axes whose sizes multiply to 1 is
the identity and emits nothing.
"""
from __future__ import annotations

import math

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import (
    AllGatherOp,
    AllReduceOp,
    AllSliceOp,
    AllToAllOp,
    AsPartialOp,
    CollectivePermuteOp,
    ReduceScatterOp,
    ShardOp,
)

from . import builder as hlo
from . import total_order
from .context import FunctionLowering, op_error
from .device import block_index, block_offset
from .groups import permute_pairs, replica_groups
from .types import Local


@rule("lower", ShardOp)
def identity(p: FunctionLowering, op) -> Local:
    """A shard or a collective on global values changes nothing, only a layout or a pending
    sum: a shard in a function without a mesh, and (gspmd.py's "lower_global" rule) every
    collective in gspmd mode. On a mesh in explicit mode, collectives have replaced shards."""
    return p.operands(op)[0]


def groups_attr(groups) -> str:
    """`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`."""
    rows = ", ".join("[" + ", ".join(str(p) for p in g) + "]" for g in groups)
    return f"dense<[{rows}]> : tensor<{len(groups)}x{len(groups[0])}xi64>"


def _group_attrs(b: hlo.Builder, p: FunctionLowering, axes) -> dict:
    """A collective's channel, replica groups over `axes` and global device ids."""
    return {
        "channel_handle": b.channel_handle(),
        "replica_groups": groups_attr(replica_groups(p.mesh, axes)),
        "use_global_device_ids": "",
    }


def _group_size(p: FunctionLowering, op) -> int:
    return math.prod(p.mesh.shape[a] for a in op.attr("axes"))


@rule("lower", AllReduceOp)
def all_reduce(p: FunctionLowering, op) -> Local:
    (x,) = p.operands(op)
    if _group_size(p, op) == 1:
        return x
    return reduce_over(p, x, op.attr("axes"), op.attr("reduction"))


def reduce_over(p: FunctionLowering, x: Local, axes, kind: str) -> Local:
    """An `all_reduce` (sum, max or min) of `x` over the group of `axes` (NaN winning a max
    or min, total_order.py): a collective op's, or one an op along a split dim makes itself."""
    b = p.b

    def reduce(v: Local) -> Local:
        region = hlo.reduction_region(b, kind, v.elem)
        return b.op("all_reduce", [v], v.shape, v.elem, _group_attrs(b, p, axes), region)

    return total_order.through_keys(b, x, kind, reduce)


@rule("lower", AllGatherOp)
def all_gather(p: FunctionLowering, op) -> Local:
    (x,) = p.operands(op)
    if _group_size(p, op) == 1:
        return x
    b, axis = p.b, op.input_type.index(op.attr("dim"))
    attrs = {"all_gather_dim": f"{axis} : i64", **_group_attrs(b, p, op.attr("axes"))}
    return b.op("all_gather", [x], p.shape(op.result_type), x.elem, attrs)


def gather_along(p: FunctionLowering, v: Local, axis: int, axes) -> Local:
    """An `all_gather` of `v` along `axis` over the group of `axes`, in group order: what an op
    along a split dim merges itself (a selection's candidates, a scan's block totals)."""
    groups = replica_groups(p.mesh, axes)
    shape = list(v.shape)
    shape[axis] *= len(groups[0])
    attrs = {"all_gather_dim": f"{axis} : i64", **_group_attrs(p.b, p, axes)}
    return p.b.op("all_gather", [v], shape, v.elem, attrs)


@rule("lower", ReduceScatterOp)
def reduce_scatter(p: FunctionLowering, op) -> Local:
    (x,) = p.operands(op)
    if _group_size(p, op) == 1:
        return x
    b, axis, kind = p.b, op.input_type.index(op.attr("dim")), op.attr("reduction")

    def reduce(v: Local) -> Local:
        region = hlo.reduction_region(b, kind, v.elem)
        attrs = {"scatter_dimension": f"{axis} : i64", **_group_attrs(b, p, op.attr("axes"))}
        return b.op("reduce_scatter", [v], p.shape(op.result_type), v.elem, attrs, region)

    return total_order.through_keys(b, x, kind, reduce)


@rule("lower", AllSliceOp)
def all_slice(p: FunctionLowering, op) -> Local:
    """Keep the device's block along `dim` of the new split over `axes`."""
    (x,) = p.operands(op)
    b, result = p.b, op.result_type
    axis, shape = result.index(op.attr("dim")), p.shape(result)
    zero = hlo.constant(b, 0, "i32")
    starts = [block_offset(b, p.mesh, op.attr("axes"), shape[axis]) if i == axis else zero for i in range(x.rank)]
    return hlo.dynamic_slice(b, x, starts, shape)


@rule("lower", AsPartialOp)
def as_partial(p: FunctionLowering, op) -> Local:
    """The value on the first device of each group over `axes`, zeros on the others."""
    (x,) = p.operands(op)
    if _group_size(p, op) == 1:
        return x
    b = p.b
    first = hlo.compare(b, "eq", block_index(b, p.mesh, op.attr("axes")), hlo.constant(b, 0, "i32"))
    if x.rank:
        first = hlo.scalar_to(b, first, x.shape)
    return hlo.select(b, first, x, hlo.splat_like(b, 0, x))


@rule("lower", AllToAllOp)
def all_to_all(p: FunctionLowering, op) -> Local:
    """Split `dst_dim` into n blocks, send block j to group member j, join what arrives
    along `src_dim` in group order."""
    (x,) = p.operands(op)
    n = _group_size(p, op)
    if n == 1:
        return x
    b, src = p.b, op.input_type
    attrs = {
        "split_dimension": f"{src.index(op.attr('dst_dim'))} : i64",
        "concat_dimension": f"{src.index(op.attr('src_dim'))} : i64",
        "split_count": f"{n} : i64",
        "replica_groups": groups_attr(replica_groups(p.mesh, op.attr("axes"))),
        "channel_handle": b.channel_handle(),
    }
    return b.op("all_to_all", [x], p.shape(op.result_type), x.elem, attrs)


def pairs_attr(pairs) -> str:
    rows = ", ".join(f"[{s}, {t}]" for s, t in pairs)
    return f"dense<[{rows}]> : tensor<{len(pairs)}x2xi64>"


@rule("lower", CollectivePermuteOp)
def collective_permute(p: FunctionLowering, op) -> Local:
    """Each device receives the shard it must hold from a device holding it (itself when it
    already does: every device is a target, so none is left with zeros)."""
    (x,) = p.operands(op)
    src, dst = op.input_type, op.result_type
    try:
        pairs = permute_pairs(p.mesh, src, dst)
    except ValueError as e:
        raise op_error(op, str(e)) from None
    if all(s == t for s, t in pairs):
        return x
    return permute(p.b, x, pairs)


def permute(b: hlo.Builder, x: Local, pairs) -> Local:
    """A `collective_permute` of `x` by `(source, target)` partition pairs; a device that is
    no target receives zeros."""
    attrs = {"source_target_pairs": pairs_attr(pairs), "channel_handle": b.channel_handle()}
    return b.op("collective_permute", [x], x.shape, x.elem, attrs)
