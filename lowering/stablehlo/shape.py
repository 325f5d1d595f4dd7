"""Shape ops on local shards. broadcast and transpose move dims by name; rename and reshape
are local reshapes (the partitioned verifier has checked that each reshape group is laid out
alike on both sides); slice, concat, split and pad act along a dim every device holds whole, and
shift too unless the dim is split, where it exchanges halos (halo.py).
"""
from __future__ import annotations

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import (
    BroadcastOp,
    ConcatOp,
    PadOp,
    RenameOp,
    ReshapeOp,
    ShiftOp,
    SliceOp,
    SplitOp,
    TransposeOp,
)

from . import builder as hlo
from .context import FunctionLowering
from .halo import extend_with_halos
from .types import Local


@rule("lower", BroadcastOp, TransposeOp)
def broadcast(p: FunctionLowering, op) -> Local:
    """Add the result's new names and reorder (also `transpose`)."""
    (x,) = p.operands(op)
    result = op.result_type
    return hlo.align(p.b, x, op.input_type.names, result.names, p.shape(result))


@rule("lower", ReshapeOp, RenameOp)
def reshape(p: FunctionLowering, op) -> Local:
    """Row-major reinterpretation of the shard (also `rename`)."""
    (x,) = p.operands(op)
    return hlo.reshape(p.b, x, p.shape(op.result_type))


def _axis(op, t) -> int:
    return t.index(op.attr("dim"))


@rule("lower", SliceOp)
def slice_(p: FunctionLowering, op) -> Local:
    (x,) = p.operands(op)
    axis, start = _axis(op, op.input_type), op.attr("start")
    return hlo.slice_along(p.b, x, axis, start, start + op.result_type.shape[axis])


@rule("lower", ConcatOp)
def concat(p: FunctionLowering, op) -> Local:
    return hlo.concatenate(p.b, p.operands(op), _axis(op, op.result_type))


@rule("lower", SplitOp)
def split(p: FunctionLowering, op) -> list[Local]:
    """One slice of the shard per piece, at the piece's offset along the whole dim."""
    (x,) = p.operands(op)
    axis = _axis(op, op.input_type)
    return [hlo.slice_along(p.b, x, axis, start, start + t.shape[axis])
            for start, t in zip(op.piece_offsets(), op.result_types)]


@rule("lower", PadOp)
def pad(p: FunctionLowering, op) -> Local:
    (x,) = p.operands(op)
    value = hlo.constant(p.b, op.attr("value"), x.elem)
    return hlo.pad(p.b, x, value, _axis(op, op.input_type), op.attr("low"), op.attr("high"))


@rule("lower", ShiftOp)
def shift(p: FunctionLowering, op) -> Local:
    """out[i] = in[i - offset]. Along a split dim: the shard extended by the rows its
    neighbours send (a halo exchange), cut to the shifted window. Along a whole dim: a
    rotation (two slices joined) when wrapping, otherwise a pad by `offset` on one side and
    a cut on the other, with `fill`."""
    (x,) = p.operands(op)
    b, axis, offset = p.b, _axis(op, op.input_type), op.attr("offset")
    n = x.shape[axis]
    axes = p.split_axes(op.input_type, axis)
    if axes:
        low, high = op.halos()[op.attr("dim")]
        extended = extend_with_halos(b, p.mesh, x, axis, axes, low, high, op.attr("fill"), op.attr("wrap"))
        return hlo.slice_along(b, extended, axis, high, high + n)
    if op.attr("wrap"):
        k = offset % n
        if k == 0:
            return x
        return hlo.concatenate(b, [hlo.slice_along(b, x, axis, n - k, n), hlo.slice_along(b, x, axis, 0, n - k)], axis)
    if offset == 0:
        return x
    if abs(offset) >= n:
        return hlo.splat_like(b, op.attr("fill"), x)
    return hlo.pad(b, x, hlo.constant(b, op.attr("fill"), x.elem), axis, offset, -offset)
