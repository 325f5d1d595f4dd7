"""cumsum and cumprod on local shards.

Each device scans its block with a `reduce_window` whose window is the whole block, padded
on the side the sums come from (as jax lowers cumsum). On a dim split over axes A, the
blocks' totals (the scan's last element, or first when reversed) are all-gathered over A;
each device reduces the totals of the blocks before its own (after it, reversed), masked by
its block index, and combines that prefix with its scan. `exclusive` shifts the local scan by
one place before the combine, filling the identity. bf16/f16 are computed in f32 and rounded
once, as in the interpreter.
"""
from __future__ import annotations

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import CumprodOp, CumsumOp

from . import builder as hlo
from .collectives import gather_along
from .context import FunctionLowering
from .device import block_index
from .types import Local, compute_element

_COMBINE = {"sum": "add", "prod": "multiply"}


def _scan(b: hlo.Builder, v: Local, axis: int, kind: str, reverse: bool) -> Local:
    """The inclusive running sum or product of `v` along `axis`."""
    n = v.shape[axis]
    window = [n if i == axis else 1 for i in range(v.rank)]
    low, high = (0, n - 1) if reverse else (n - 1, 0)
    padding = ", ".join(f"[{low}, {high}]" if i == axis else "[0, 0]" for i in range(v.rank))
    attrs = {"window_dimensions": hlo.i64_array(window), "window_strides": hlo.i64_array([1] * v.rank),
             "padding": f"dense<[{padding}]> : tensor<{v.rank}x2xi64>"}
    init = hlo.constant(b, hlo.reduction_identity(kind, v.elem), v.elem)
    return b.op("reduce_window", [v, init], v.shape, v.elem, attrs, hlo.reduction_region(b, kind, v.elem))


@rule("lower", CumsumOp, CumprodOp)
def cumulative(p: FunctionLowering, op) -> Local:
    return scan_of(p, op, p.operands(op)[0])


def scan_of(p: FunctionLowering, op, x: Local) -> Local:
    """The op's result from its operand's value `x` (the shard, or gspmd.py's constrained value)."""
    b, src, kind = p.b, op.input_type, op.KIND
    elem = compute_element(x.elem)
    x = hlo.convert(b, x, elem)
    axis, reverse = src.index(op.attr("dim")), op.attr("reverse")
    n = x.shape[axis]
    scan = _scan(b, x, axis, kind, reverse)
    identity = hlo.constant(b, hlo.reduction_identity(kind, elem), elem)
    out = hlo.pad(b, scan, identity, axis, -1 if reverse else 1, 1 if reverse else -1) if op.attr("exclusive") else scan
    axes = p.split_axes(src, axis)
    if axes:
        total = hlo.slice_along(b, scan, axis, 0, 1) if reverse else hlo.slice_along(b, scan, axis, n - 1, n)
        totals = gather_along(p, total, axis, axes)
        block = hlo.scalar_to(b, block_index(b, p.mesh, axes), totals.shape)
        other = hlo.compare(b, "gt" if reverse else "lt", hlo.iota(b, totals.shape, axis, "i32"), block)
        prefix = hlo.reduce(b, hlo.select(b, other, totals, hlo.splat_like(b, hlo.reduction_identity(kind, elem), totals)),
                            [axis], kind)
        kept = [i for i in range(x.rank) if i != axis]
        out = hlo.binary(b, _COMBINE[kind], hlo.broadcast_in_dim(b, prefix, out.shape, kept), out)
    return hlo.convert(b, out, op.result_type.element_type)
