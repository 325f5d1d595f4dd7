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
from .builder import tensor_text
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
    scalars = [tensor_text((), v.elem) for v in (keys, keys, indices, indices, values, values)]
    args = [b.fresh() for _ in scalars]
    greater = b.fresh()
    key_type = scalars[0]
    region = (
        "{\n^bb0(" + ", ".join(f"{a}: {t}" for a, t in zip(args, scalars)) + "):\n"
        f'  {greater} = "stablehlo.compare"({args[0]}, {args[1]}) {{comparison_direction = '
        f"#stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type "
        f"{hlo.compare_type(keys.elem)}>}} : ({key_type}, {key_type}) -> tensor<i1>\n"
        f'  "stablehlo.return"({greater}) : (tensor<i1>) -> ()\n}}'
    )
    name = b.fresh()
    operands = [keys, indices, values]
    line = (f'{name}:3 = "stablehlo.sort"({", ".join(v.name for v in operands)}) ({region}) '
            f"{{dimension = {axis} : i64, is_stable = true}} : ({', '.join(v.type for v in operands)}) -> "
            f"({', '.join(v.type for v in operands)})")
    b.lines.append(line + (f" {b.location}" if b.location else ""))
    out_indices = Local(f"{name}#1", indices.shape, indices.elem)
    out_values = Local(f"{name}#2", values.shape, values.elem)
    return hlo.slice_along(b, out_values, axis, 0, k), hlo.slice_along(b, out_indices, axis, 0, k)


def _top(b: hlo.Builder, v: Local, axis: int, k: int) -> tuple[Local, Local]:
    """`chlo.top_k` along `axis` (jax.lax.top_k: the k largest in total order, ties to the
    lowest index): (values, i32 indices within `v`)."""
    last = v.rank - 1
    perm = [i for i in range(v.rank) if i != axis] + [axis]
    moved = hlo.transpose(b, v, perm) if axis != last else v
    shape = moved.shape[:-1] + (k,)
    name = b.fresh()
    line = (f'{name}:2 = "chlo.top_k"({moved.name}) {{k = {k} : i64}} : ({moved.type}) -> '
            f"({tensor_text(shape, v.elem)}, {tensor_text(shape, 'i32')})")
    b.lines.append(line + (f" {b.location}" if b.location else ""))
    values, indices = Local(f"{name}#0", shape, v.elem), Local(f"{name}#1", shape, "i32")
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
    scalar = tensor_text((), keys.elem)
    index = tensor_text((), indices.elem)
    ka, ia, kb, ib = (b.fresh() for _ in range(4))
    gt, eq, lt, tie, take, k, i = (b.fresh() for _ in range(7))
    kind = hlo.compare_type(keys.elem)

    def compare(out, direction, x, y, t, how):
        return (f'  {out} = "stablehlo.compare"({x}, {y}) {{comparison_direction = #stablehlo<comparison_direction '
                f"{direction}>, compare_type = #stablehlo<comparison_type {how}>}} : ({t}, {t}) -> tensor<i1>\n")

    region = (
        f"{{\n^bb0({ka}: {scalar}, {ia}: {index}, {kb}: {scalar}, {ib}: {index}):\n"
        + compare(gt, "GT", ka, kb, scalar, kind) + compare(eq, "EQ", ka, kb, scalar, kind)
        + compare(lt, "LT", ia, ib, index, "SIGNED")
        + f'  {tie} = "stablehlo.and"({eq}, {lt}) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n'
        f'  {take} = "stablehlo.or"({gt}, {tie}) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n'
        f'  {k} = "stablehlo.select"({take}, {ka}, {kb}) : (tensor<i1>, {scalar}, {scalar}) -> {scalar}\n'
        f'  {i} = "stablehlo.select"({take}, {ia}, {ib}) : (tensor<i1>, {index}, {index}) -> {index}\n'
        f'  "stablehlo.return"({k}, {i}) : ({scalar}, {index}) -> ()\n}}'
    )
    lowest = hlo.constant(b, hlo.reduction_identity("max", keys.elem), keys.elem)
    last = hlo.constant(b, np.iinfo(np.int32).max, indices.elem)
    shape = tuple(n for a, n in enumerate(keys.shape) if a != axis)
    name = b.fresh()
    line = (f'{name}:2 = "stablehlo.reduce"({keys.name}, {indices.name}, {lowest.name}, {last.name}) ({region}) '
            f"{{dimensions = array<i64: {axis}>}} : ({keys.type}, {indices.type}, {lowest.type}, {last.type}) -> "
            f"({tensor_text(shape, keys.elem)}, {tensor_text(shape, indices.elem)})")
    b.lines.append(line + (f" {b.location}" if b.location else ""))
    return Local(f"{name}#0", shape, keys.elem), Local(f"{name}#1", shape, indices.elem)


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
