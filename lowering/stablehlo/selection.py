"""top_k, argmax and argmin on local shards: select among the block, then merge the group's
candidates.

Every element gets an integer key whose order is the op's (dialect/ops/selection.py): the
IEEE total-order key of a float (total_order.py) for top_k; for argmax/argmin the same after
every NaN is made the extreme that wins and -0 made +0; an integer itself. argmin selects
the largest bitwise complement of the key. A stable `sort` of (keys, global indices, values)
by key, descending, keeps equal keys in index order, so ties go to the lowest index.

On a dim split over axes A, each device keeps its first k (or its whole block when
smaller), an `all_gather` over A brings the group's candidates together in block order
(so equal keys stay in index order), and a second sort of those selects the k. In a global
program (gspmd mode) the dim is whole and there is one sort.
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


def _sorted(b: hlo.Builder, op, values: Local, indices: Local, axis: int, k: int) -> tuple[Local, Local]:
    """The first `k` (values, indices) along `axis` in the op's order (a stable sort by key)."""
    keys = _keys(b, values, op)
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


def select_along(p: FunctionLowering, op, k: int) -> tuple[Local, Local]:
    """The first k (values, global indices) along the op's dim, the dim's position kept."""
    b, src = p.b, op.input_type
    (x,) = p.operands(op)
    axis = src.index(op.attr("dim"))
    indices = global_iota(p, src, axis)
    values, indices = _sorted(b, op, x, indices, axis, min(k, x.shape[axis]))
    axes = p.split_axes(src, axis)
    if axes:
        values = gather_along(p, values, axis, axes)
        indices = gather_along(p, indices, axis, axes)
        values, indices = _sorted(b, op, values, indices, axis, k)
    return values, indices


@rule("lower", TopKOp)
def top_k(p: FunctionLowering, op) -> list[Local]:
    return list(select_along(p, op, op.k))


@rule("lower", ArgMaxOp, ArgMinOp)
def arg_extreme(p: FunctionLowering, op) -> Local:
    _, indices = select_along(p, op, 1)
    return hlo.reshape(p.b, indices, p.shape(op.result_type))
