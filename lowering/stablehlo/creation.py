"""constant and iota: each device makes its own block of the global tensor.

A splat is made at the local shape directly; other constants embed the global value and
`dynamic_slice` the device's block out of it (offsets from `partition_id`). iota is the
local iota plus the block's first global index.
"""
from __future__ import annotations

import numpy as np

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import ConstantOp, IotaOp

from . import builder as hlo
from .context import FunctionLowering
from .device import INDEX
from .types import Local


@rule("lower", ConstantOp)
def constant(p: FunctionLowering, op) -> Local:
    t = op.result_type
    shape = p.shape(t)
    splat = op.splat_value()  # a splat is one number: never build the (global) array
    if splat is not None:
        return hlo.constant(p.b, splat, t.element_type, shape)
    whole = hlo.dense_constant(p.b, np.asarray(op.values()), t.element_type)
    if not p.is_split(t):
        return whole
    return hlo.dynamic_slice(p.b, whole, p.offsets(t), shape)


def global_iota(p: FunctionLowering, t, axis: int, elem: str = INDEX) -> Local:
    """The global index along dim `axis` of every element of `t`'s shard (as `elem`)."""
    b = p.b
    shape = p.shape(t)
    local = hlo.iota(b, shape, axis, elem)
    if not p.split_axes(t, axis):
        return local
    offset = hlo.convert(b, p.offsets(t)[axis], elem)
    return hlo.binary(b, "add", local, hlo.scalar_to(b, offset, shape))


@rule("lower", IotaOp)
def iota(p: FunctionLowering, op) -> Local:
    t = op.result_type
    index = "i64" if t.element_type == "i64" else INDEX
    return hlo.convert(p.b, global_iota(p, t, t.index(op.attr("dim")), index), t.element_type)
