"""Which uses of a partial value may stay lazy (docs/partitioning.md, "Linear uses").

A pending sum `x = x_1 + ... + x_n` may flow through an op f when f(x) = f(x_1) + ... +
f(x_n) computed locally. Each op states how, per pending reduction kind, in its LINEAR
trait (`MtfOp.linear_rules()`), with one of these rule names:

- "each": every pending operand stays pending (neg, reduce_sum);
- "alike": all operands must be pending alike (over the same axes, in any order), then all
  stay (max/min of pending max/min; every op that only moves elements);
- "summands": "alike" for an op whose every operand is a summand (add, sub): sums pending
  over different axes, or a pending sum and a replicated scalar, are first made pending
  alike over the union of their axes (`joined_sums`, by `mtf.as_partial`), so one all-reduce
  later completes them all instead of one per operand now;
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
    rules = op.linear_rules() if hasattr(op, "linear_rules") else {}
    if _split_axes(operand_types + [result]) & set(axes) or kind not in rules:
        return [False] * len(operand_types)
    rule = rules[kind]
    if rule in ("alike", "summands"):
        alike = all(set(t.partial) == set(axes) and t.partial_reduction == kind for t in operand_types)
        return [all(pending) and alike] * len(operand_types)
    if rule == "one_factor":
        first_index = pending.index(True)
        return [i == first_index for i in range(len(operand_types))]
    if rule == "numerator":
        return [True] + [False] * (len(operand_types) - 1)
    return pending  # "each"


def joined_sums(op, operand_types: list[TensorType], result: TensorType) -> tuple[str, ...] | None:
    """The axes over which the operands of a "summands" op may all be made pending (each
    operand then needs `mtf.as_partial` over the union's axes it lacks), or None where they
    are pending alike already or cannot be joined.

    They can be where every pending operand is a pending sum, no dim of the op is split over
    the union (a replicated operand must not vary along the axes it is made pending over),
    and every operand is pending or a scalar (making a tensor pending costs a pass over it
    and saves nothing when it is the only pending operand's all-reduce that moves)."""
    rules = op.linear_rules() if hasattr(op, "linear_rules") else {}
    if rules.get("sum") != "summands":
        return None
    pending = [t for t in operand_types if t.partial]
    if not pending or any(t.partial_reduction != "sum" for t in pending):
        return None
    union: list[str] = []
    for t in pending:
        union += [a for a in t.partial if a not in union]
    if all(set(t.partial) == set(union) for t in operand_types):
        return None
    if _split_axes(operand_types + [result]) & set(union) or any(not t.partial and t.dims for t in operand_types):
        return None
    return tuple(union)


def _split_axes(types: list[TensorType]) -> set[str]:
    """The mesh axes that split some dim of `types` (a pending sum cannot be pending over them)."""
    return {a for t in types for d in t.dims for a in d.axes or ()}
