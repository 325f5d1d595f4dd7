"""Which uses of a partial value may stay lazy (docs/partitioning.md, "Linear uses").

A pending sum `x = x_1 + ... + x_n` may flow through an op f when f(x) = f(x_1) + ... +
f(x_n) computed locally. Each op states how, per pending reduction kind, in its LINEAR
trait (`MtfOp.linear_rules()`), with one of these rule names:

- "each": every pending operand stays pending (neg, reduce_sum);
- "alike": all operands must be pending alike, then all stay (add, sub; max/min of pending
  max/min; every op that only moves elements);
- "one_factor": multilinear, exactly one pending factor (mul, einsum);
- "numerator": linear in the first operand only (div).
"""
from __future__ import annotations

from .tensor_type import TensorType


def lazy_operands(op, operand_types: list[TensorType], result: TensorType) -> list[bool]:
    """For each operand: may it stay pending (partial) through this op?

    All pending operands of one op must be pending over the same axes with the same
    reduction for the result to be pending too, and no dim of the op may be split over a
    pending axis (a summand cannot meet another device's block); `lazy_operands` says False
    for the operands that must be reduced first.
    """
    pending = [bool(t.partial) for t in operand_types]
    if not any(pending):
        return pending
    first = next(t for t in operand_types if t.partial)
    kind, axes = first.partial_reduction, first.partial
    split_axes = {a for t in operand_types + [result] for d in t.dims for a in d.axes or ()}
    rules = op.linear_rules() if hasattr(op, "linear_rules") else {}
    if split_axes & set(axes) or kind not in rules:
        return [False] * len(operand_types)
    rule = rules[kind]
    if rule == "alike":
        alike = all(t.partial == axes and t.partial_reduction == kind for t in operand_types)
        return [all(pending) and alike] * len(operand_types)
    if rule == "one_factor":
        first_index = pending.index(True)
        return [i == first_index for i in range(len(operand_types))]
    if rule == "numerator":
        return [True] + [False] * (len(operand_types) - 1)
    return pending  # "each"
