"""Which uses of a partial value may stay lazy (docs/partitioning.md, "Linear uses").

A pending sum `x = x_1 + ... + x_n` may flow through an op f when f(x) = f(x_1) + ... +
f(x_n) computed locally: negation, sums of values pending alike, products with a
non-pending factor, contractions with one pending operand, sums over dims, and every op
that only moves elements. Pending max/min flow only through max/min and moves.
"""
from __future__ import annotations

from meshir.dialect.tensor_type import TensorType

#: Ops that only move or copy elements (zero padding included, checked separately).
MOVES = frozenset({"mtf.broadcast", "mtf.transpose", "mtf.rename", "mtf.reshape", "mtf.slice", "mtf.concat",
                   "mtf.pad", "mtf.stop_gradient"})
#: Ops after which a pending sum stays a pending sum, given the operand conditions below.
SUM_LINEAR = frozenset({"mtf.neg", "mtf.add", "mtf.sub", "mtf.mul", "mtf.div", "mtf.einsum", "mtf.reduce_sum"})
MAX_LINEAR = {"max": frozenset({"mtf.max", "mtf.reduce_max"}), "min": frozenset({"mtf.min", "mtf.reduce_min"})}


def lazy_operands(op, operand_types: list[TensorType], result: TensorType) -> list[bool]:
    """For each operand: may it stay pending (partial) through this op?

    All pending operands of one op must be pending over the same axes with the same
    reduction for the result to be pending too, and no dim of the op may be split over a
    pending axis (a summand cannot meet another device's block); `lazy_operands` says False
    for the operands that must be reduced first.
    """
    name = op.operation.name
    pending = [bool(t.partial) for t in operand_types]
    if not any(pending):
        return pending
    first = next(t for t in operand_types if t.partial)
    kind, axes = first.partial_reduction, first.partial
    split_axes = {a for t in operand_types + [result] for d in t.dims for a in d.axes or ()}
    if split_axes & set(axes):
        return [False] * len(operand_types)
    alike = [t.partial == axes and t.partial_reduction == kind for t in operand_types]
    if name == "mtf.pad" and op.attr("value") != 0.0 and kind == "sum":
        return [False] * len(operand_types)
    if name in MOVES or name in MAX_LINEAR.get(kind, ()):
        # Moves of one operand; concat, max and min need every operand pending alike.
        return [all(pending) and all(alike)] * len(operand_types)
    if kind != "sum" or name not in SUM_LINEAR:
        return [False] * len(operand_types)
    if name in ("mtf.add", "mtf.sub"):
        # (a1 + a2) + (b1 + b2) is pending; (a1 + a2) + c is not.
        ok = all(pending) and all(alike)
        return [ok] * len(operand_types)
    if name in ("mtf.mul", "mtf.einsum"):
        # Multilinear: exactly one pending factor.
        first_index = pending.index(True)
        return [i == first_index for i in range(len(operand_types))]
    if name == "mtf.div":
        return [True, False]  # linear in the numerator only
    return pending  # neg, reduce_sum
