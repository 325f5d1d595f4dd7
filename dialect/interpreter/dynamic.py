"""Rules of dynamic_slice and dynamic_update_slice (the start wrapped and clamped as jax.lax does)."""
from __future__ import annotations

import numpy as np

from ..op_registry import rule
from ..ops.dynamic import DynamicSliceOp, DynamicUpdateSliceOp


def clamped_start(op, start, window: int) -> int:
    """`start` (counted from the end when negative, as jax does) moved into [0, size of dim - window]."""
    n, start = op.input_type.size(op.attr("dim")), int(start)
    return int(np.clip(start + n if start < 0 else start, 0, n - window))


@rule("interpret", DynamicSliceOp)
def dynamic_slice(op, args):
    x, start = args
    axis, size = op.input_type.index(op.attr("dim")), op.result_type.size(op.attr("dim"))
    s = clamped_start(op, start, size)
    return np.take(x, np.arange(s, s + size), axis=axis)


@rule("interpret", DynamicUpdateSliceOp)
def dynamic_update_slice(op, args):
    x, update, start = args
    axis, size = op.input_type.index(op.attr("dim")), op.operand_types[1].size(op.attr("dim"))
    s = clamped_start(op, start, size)
    out = np.array(x, copy=True)
    index = [slice(None)] * out.ndim
    index[axis] = slice(s, s + size)
    out[tuple(index)] = update
    return out
