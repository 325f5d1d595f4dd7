"""dynamic_slice and dynamic_update_slice on local shards.

The start is made global first by jax.lax's rule: a negative start counts from the end,
then it is clamped into [0, N − window] (StableHLO would clamp a local start against the
block instead). Along a dim split over axes A, with the device's
block at `offset`:
- slice: the block padded with `window` zeros on each side is cut at `start − offset +
  window`, which gives the part of the window in the block and zeros elsewhere (a window
  wholly before or after the block clamps into the padding); one all-reduce (sum) over A adds
  the owners' parts. A −0.0 in the window comes back as +0.0 (it is added to zeros).
- update: the update padded with `block` zeros on each side is cut at `offset − start +
  block` to the block's length, and selected where the block's global indices fall in the
  window: each device writes its part, nothing crosses.
"""
from __future__ import annotations

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import DynamicSliceOp, DynamicUpdateSliceOp

from . import builder as hlo
from .collectives import reduce_over
from .context import FunctionLowering
from .creation import global_iota
from .types import Local


def _clamped(b: hlo.Builder, start: Local, size: int, limit: int) -> Local:
    """`start` counted from the end when negative (jax's rule), then moved into [0, limit]."""
    low, high = hlo.constant(b, 0, start.elem), hlo.constant(b, limit, start.elem)
    negative = hlo.compare(b, "lt", start, low)
    start = hlo.select(b, negative, hlo.binary(b, "add", start, hlo.constant(b, size, start.elem)), start)
    return hlo.binary(b, "maximum", hlo.binary(b, "minimum", start, high), low)


def _starts(b: hlo.Builder, rank: int, axis: int, start: Local) -> list[Local]:
    zero = hlo.constant(b, 0, start.elem)
    return [start if i == axis else zero for i in range(rank)]


@rule("lower", DynamicSliceOp)
def dynamic_slice(p: FunctionLowering, op) -> Local:
    b, src, dim = p.b, op.input_type, op.attr("dim")
    x, start = p.operands(op)
    axis, size = src.index(dim), op.result_type.size(dim)
    start = _clamped(b, start, src.size(dim), src.size(dim) - size)
    shape = p.shape(op.result_type)
    axes = p.split_axes(src, axis)
    if not axes:
        return hlo.dynamic_slice(b, x, _starts(b, x.rank, axis, start), shape)
    padded = hlo.pad(b, x, hlo.constant(b, 0, x.elem), axis, size, size)
    local = hlo.binary(b, "add", hlo.binary(b, "subtract", start, p.offsets(src)[axis]), hlo.constant(b, size, start.elem))
    return reduce_over(p, hlo.dynamic_slice(b, padded, _starts(b, x.rank, axis, local), shape), axes, "sum")


@rule("lower", DynamicUpdateSliceOp)
def dynamic_update_slice(p: FunctionLowering, op) -> Local:
    b, src, dim = p.b, op.input_type, op.attr("dim")
    x, update, start = p.operands(op)
    axis, size = src.index(dim), op.operand_types[1].size(dim)
    start = _clamped(b, start, src.size(dim), src.size(dim) - size)
    if not p.split_axes(src, axis):
        return hlo.dynamic_update_slice(b, x, update, _starts(b, x.rank, axis, start))
    block = x.shape[axis]
    padded = hlo.pad(b, update, hlo.constant(b, 0, update.elem), axis, block, block)
    local = hlo.binary(b, "add", hlo.binary(b, "subtract", p.offsets(src)[axis], start), hlo.constant(b, block, start.elem))
    piece = hlo.dynamic_slice(b, padded, _starts(b, x.rank, axis, local), x.shape)
    index = global_iota(p, src, axis)
    first = hlo.scalar_to(b, start, x.shape)
    after = hlo.scalar_to(b, hlo.binary(b, "add", start, hlo.constant(b, size, start.elem)), x.shape)
    inside = hlo.binary(b, "and", hlo.compare(b, "ge", index, first), hlo.compare(b, "lt", index, after))
    return hlo.select(b, inside, piece, x)
