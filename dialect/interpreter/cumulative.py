"""Rules of cumsum and cumprod (NumPy's running sums and products; bf16/f16 in f32, rounded once)."""
from __future__ import annotations

import numpy as np

from ..op_registry import rule
from ..ops.cumulative import CumprodOp, CumsumOp
from .arrays import widen


@rule("interpret", CumsumOp, CumprodOp)
def cumulative(op, args):
    x = widen(args[0])
    axis = op.input_type.index(op.attr("dim"))
    scan, identity = (np.cumsum, 0) if op.KIND == "sum" else (np.cumprod, 1)
    if op.attr("reverse"):
        x = np.flip(x, axis)
    with np.errstate(all="ignore"):
        y = scan(x, axis=axis, dtype=x.dtype)
    if op.attr("exclusive"):
        first = np.full_like(np.take(y, [0], axis=axis), identity)
        y = np.concatenate([first, np.take(y, range(y.shape[axis] - 1), axis=axis)], axis=axis)
    if op.attr("reverse"):
        y = np.flip(y, axis)
    return np.ascontiguousarray(y).astype(args[0].dtype)
