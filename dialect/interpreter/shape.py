"""Rules of the shape ops: broadcast, reshape, rename, transpose, slice, concat, split, pad, shift."""
from __future__ import annotations

import numpy as np

from ..op_registry import rule
from ..ops.shape import BroadcastOp, ConcatOp, PadOp, RenameOp, ReshapeOp, ShiftOp, SliceOp, SplitOp, TransposeOp
from .arrays import align, broadcast_to_type
from .dispatch import rule_output


@rule("interpret", BroadcastOp)
def broadcast(op, args):
    """Add the result's new names (replicating) and reorder by name."""
    return broadcast_to_type(args[0], op.input_type.names, op.result_type)


@rule("interpret", ReshapeOp, RenameOp)
def reshape(op, args):
    """Row-major reshape to the result's shape (rename is the same data under new names)."""
    return np.reshape(args[0], op.result_type.shape)


@rule("interpret", TransposeOp)
def transpose(op, args):
    """Reorder the axes by name."""
    return align(args[0], op.input_type.names, op.result_type.names)


def _axis(op, t, attr="dim") -> int:
    return t.index(op.attr(attr))


@rule("interpret", SliceOp)
def slice_(op, args):
    """The window [start, start + result size) along `dim`."""
    axis, start = _axis(op, op.input_type), op.attr("start")
    length = op.result_type.shape[axis]
    return np.take(args[0], np.arange(start, start + length), axis=axis)


@rule("interpret", ConcatOp)
def concat(op, args):
    """Join the operands along `dim` (every operand has the result's name order)."""
    return np.concatenate(args, axis=_axis(op, op.result_type))


@rule("interpret", SplitOp)
def split(op, args):
    """The consecutive pieces along `dim`, one per result (concat's inverse)."""
    pieces = np.split(args[0], op.piece_offsets()[1:], axis=_axis(op, op.input_type))
    return rule_output(op, pieces)


@rule("interpret", PadOp)
def pad(op, args):
    """`low` then `high` elements of `value` around `dim`."""
    x = args[0]
    widths = [(0, 0)] * x.ndim
    widths[_axis(op, op.input_type)] = (op.attr("low"), op.attr("high"))
    return np.pad(x, widths, constant_values=np.asarray(op.attr("value")).astype(x.dtype))


@rule("interpret", ShiftOp)
def shift(op, args):
    """out[i] = in[i - offset] along `dim`; out-of-range sources give `fill`, or wrap."""
    x = args[0]
    axis, offset = _axis(op, op.input_type), op.attr("offset")
    if op.attr("wrap"):
        return np.roll(x, offset, axis=axis)
    n = x.shape[axis]
    out = np.full(x.shape, np.asarray(op.attr("fill")).astype(x.dtype), dtype=x.dtype)
    src = np.arange(n) - offset
    keep = (src >= 0) & (src < n)
    index = [slice(None)] * x.ndim
    index[axis] = np.nonzero(keep)[0]
    out[tuple(index)] = np.take(x, src[keep], axis=axis)
    return out
