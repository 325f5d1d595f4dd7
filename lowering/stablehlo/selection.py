"""top_k, argmax and argmin on local shards: select among the block, then merge the group's
candidates.

top_k: each device takes its block's first k with `chlo.top_k` (jax.lax.top_k's own op, so
its order: IEEE total order, ties to the lowest index). argmax/argmin: one two-operand
`reduce` of (key, global index) pairs, as jax lowers argmax, on integer keys whose
descending order is the op's (dialect/ops/selection.py): the IEEE total-order key of a float
(total_order.py) after every NaN is made the extreme that wins and -0 made +0, an integer
itself, and argmin's keys complemented; equal keys keep the lowest index.

On a dim split over axes A, the block's indices are made global, an `all_gather` over A
brings the group's candidates (k per device, or one pair) together in block order, and they
are selected again: top_k by a stable `sort` on total-order keys (equal keys stay in block
order, so in index order), argmax/argmin by the same reduce. In a global program (gspmd mode)
the dim is whole and the first step alone selects.
"""
from __future__ import annotations

import numpy as np

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import ArgMaxOp, ArgMinOp, TopKOp

from . import builder as hlo
from .collectives import gather_along
from .context import FunctionLowering
from .creation import global_iota
from .total_order import bit_keys
from .types import Local, is_float


def _keys(b: hlo.Builder, v: Local, op) -> Local:
    """Integer keys whose descending order is the op's selection order."""
    if is_float(v.elem):
        if op.ORDER == "numeric":
            v = hlo.select(b, hlo.compare(b, "ne", v, v), hlo.splat_like(b, np.nan if op.LARGEST else -np.nan, v), v)
            v = hlo.select(b, hlo.compare(b, "eq", v, hlo.splat_like(b, 0, v)), hlo.splat_like(b, 0, v), v)
        keys = bit_keys(b, v)
    else:
        keys = v
    if not op.LARGEST:
        keys = hlo.binary(b, "xor", keys, hlo.splat_like(b, -1, keys))
    return keys


def _sorted(b: hlo.Builder, keys: Local, indices: Local, values: Local, axis: int, k: int) -> tuple[Local, Local]:
    """The first `k` (values, indices) along `axis` by descending integer `keys` (a stable sort,
    so equal keys keep their order)."""
    operands = [keys, indices, values]
    args = hlo.scalar_arguments(b, [keys, keys, indices, indices, values, values])
    region = hlo.region_text(b, args, lambda a: [hlo.compare(b, "gt", a[0], a[1])])
    _, out_indices, out_values = b.ops("sort", operands, [(v.shape, v.elem) for v in operands],
                                      {"dimension": f"{axis} : i64", "is_stable": "true"}, region)
    return hlo.slice_along(b, out_values, axis, 0, k), hlo.slice_along(b, out_indices, axis, 0, k)


def _top(b: hlo.Builder, v: Local, axis: int, k: int) -> tuple[Local, Local]:
    """`chlo.top_k` along `axis` (jax.lax.top_k: the k largest in total order, ties to the
    lowest index): (values, i32 indices within `v`)."""
    last = v.rank - 1
    perm = [i for i in range(v.rank) if i != axis] + [axis]
    moved = hlo.transpose(b, v, perm)
    shape = moved.shape[:-1] + (k,)
    values, indices = b.ops("chlo.top_k", [moved], [(shape, v.elem), (shape, "i32")], {"k": f"{k} : i64"})
    if axis == last:
        return values, indices
    back = [perm.index(i) for i in range(v.rank)]
    return hlo.transpose(b, values, back), hlo.transpose(b, indices, back)


def select_along(p: FunctionLowering, op, k: int) -> tuple[Local, Local]:
    """The first k (values, global indices) along the op's dim, the dim's position kept."""
    b, src = p.b, op.input_type
    (x,) = p.operands(op)
    axis = src.index(op.attr("dim"))
    values, indices = _top(b, x, axis, min(k, x.shape[axis]))
    axes = p.split_axes(src, axis)
    if not axes:
        return values, indices
    offset = p.offsets(src)[axis]
    indices = hlo.binary(b, "add", indices, hlo.scalar_to(b, offset, indices.shape))
    values, indices = gather_along(p, values, axis, axes), gather_along(p, indices, axis, axes)
    return _sorted(b, _keys(b, values, op), indices, values, axis, k)


@rule("lower", TopKOp)
def top_k(p: FunctionLowering, op) -> list[Local]:
    return list(select_along(p, op, op.k))


def _best(b: hlo.Builder, keys: Local, indices: Local, axis: int) -> tuple[Local, Local]:
    """(largest key, its lowest index) along `axis`, by one two-operand `reduce` (as jax
    lowers argmax): an associative choice, so any reduction order gives the same pair."""

    def better(a: list[Local]) -> list[Local]:
        key_a, index_a, key_b, index_b = a
        tie = hlo.binary(b, "and", hlo.compare(b, "eq", key_a, key_b), hlo.compare(b, "lt", index_a, index_b))
        take_a = hlo.binary(b, "or", hlo.compare(b, "gt", key_a, key_b), tie)
        return [hlo.select(b, take_a, key_a, key_b), hlo.select(b, take_a, index_a, index_b)]

    region = hlo.region_text(b, hlo.scalar_arguments(b, [keys, indices, keys, indices]), better)
    lowest = hlo.constant(b, hlo.reduction_identity("max", keys.elem), keys.elem)
    last = hlo.constant(b, np.iinfo(np.int32).max, indices.elem)
    shape = tuple(n for a, n in enumerate(keys.shape) if a != axis)
    return tuple(b.ops("reduce", [keys, indices, lowest, last], [(shape, keys.elem), (shape, indices.elem)],
                       {"dimensions": hlo.i64_array([axis])}, region))


@rule("lower", ArgMaxOp, ArgMinOp)
def arg_extreme(p: FunctionLowering, op) -> Local:
    """The best (key, global index) of each block, then of the group's gathered pairs."""
    b, src = p.b, op.input_type
    (x,) = p.operands(op)
    axis = src.index(op.attr("dim"))
    keys, indices = _best(b, _keys(b, x, op), global_iota(p, src, axis), axis)
    axes = p.split_axes(src, axis)
    if axes:
        with_axis = tuple(1 if a == axis else n for a, n in enumerate(x.shape))
        keys, indices = (gather_along(p, hlo.reshape(b, v, with_axis), axis, axes) for v in (keys, indices))
        keys, indices = _best(b, keys, indices, axis)
    return indices
