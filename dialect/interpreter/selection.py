"""Rules of the selection ops: top_k, argmax, argmin (jax's orders, ties to the lowest index)."""
from __future__ import annotations

import numpy as np

from ..op_registry import rule
from ..ops.selection import ArgMaxOp, ArgMinOp, TopKOp
from .arrays import is_float


def total_order_keys(x: np.ndarray) -> np.ndarray:
    """int64 keys ordered as IEEE total order (-NaN < -inf < ... < -0 < +0 < ... < +inf <
    +NaN) for floats; the values themselves for integers."""
    if not is_float(x.dtype):
        return x.astype(np.int64)
    bits = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
    return np.where(bits < 0, bits ^ ((1 << (8 * x.dtype.itemsize - 1)) - 1), bits)


@rule("interpret", TopKOp)
def top_k(op, args):
    """The k largest along `dim` by total order, descending, ties to the lowest index."""
    x = args[0]
    axis, k = op.input_type.index(op.attr("dim")), op.k
    keys = np.moveaxis(total_order_keys(x), axis, -1)
    order = np.argsort(-keys, axis=-1, kind="stable")[..., :k]  # keys fit in 63 bits: no overflow
    values = np.take_along_axis(np.moveaxis(x, axis, -1), order, axis=-1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order, -1, axis).astype(np.int32)]


@rule("interpret", ArgMaxOp, ArgMinOp)
def arg_extreme(op, args):
    """NumPy's argmax/argmin: the first NaN wins, -0 equals +0, ties to the lowest index."""
    axis = op.input_type.index(op.attr("dim"))
    pick = np.argmax if op.LARGEST else np.argmin
    return np.asarray(pick(args[0], axis=axis)).astype(np.int32)
