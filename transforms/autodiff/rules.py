"""VJP rules: how to pull cotangents back through an op, in op_registry's "vjp" slot.

A rule is registered by op class (`@vjp(ExpOp)`, `no_gradient(EqOp, ...)`) as a
`Rule(fn, operands)`, and the driver finds it with `op_registry.lookup("vjp", op)`.
`fn(em, op, ct, wanted) -> {operand index: cotangent}`: `em` an Emitter placed where the
backward ops go, `op` the forward op, `wanted` the operand indices whose cotangents are
needed (the others are not computed), and `ct`:
- for an op with one result, the cotangent of that result;
- for an op with several results (`mtf.split`), a list with one cotangent per result: the
  driver gives a float result that got none zeros of its type without layout, so the rule
  states only the math; a result that is not a float has no cotangent (None);
- for a loop (`mtf.scan`, `mtf.while`: as many results as carried values and ys), a list
  with one entry per result, None where it got no cotangent: the backward loop makes the
  zeros it carries itself, in its operands' order.
A returned cotangent may carry names its operand lacks (e.g. the broadcast result's): the
driver sums them away and reorders (`Emitter.fit`), so each rule states only the math.

`differentiable(op)` says which operands a gradient can flow through: integer operands,
ids, conditions, and the inputs of comparisons, sign, floor and stop_gradient never carry
one (their VJP is zero, as in JAX). An op is active when one of those operands is, and then
all its float results are.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from meshir.dialect import op_registry
from meshir.dialect.tensor_type import TensorType


@dataclass(frozen=True)
class Rule:
    fn: Callable | None  # None: no gradient flows through the op
    operands: Callable | None  # op -> differentiable operand indices; None means all of them


def vjp(*op_classes: type, operands: Callable | None = None):
    """Register `fn` as the VJP of the ops of `op_classes` (`operands`: see Rule)."""

    def register(fn):
        for cls in op_classes:
            op_registry.register("vjp", cls, Rule(fn, operands))
        return fn

    return register


def no_gradient(*op_classes: type) -> None:
    """Ops whose results do not depend differentiably on any operand (zero VJP)."""
    for cls in op_classes:
        op_registry.register("vjp", cls, Rule(None, lambda op: ()))


def vjp_classes() -> list[type]:
    """The op classes with a VJP rule, a gradient or none (for the tests' coverage checks)."""
    return op_registry.classes_with("vjp")


def differentiable(op) -> tuple[int, ...] | None:
    """Indices of the operands a gradient flows to; None for an op without a VJP rule."""
    rule = op_registry.lookup("vjp", op)
    if rule is None:
        return None
    n = len(op.operation.operands)
    indices = tuple(range(n)) if rule.operands is None else tuple(rule.operands(op))
    return tuple(i for i in indices if _is_float(op.operation.operands[i]))


def _is_float(value) -> bool:
    try:
        return TensorType.from_mlir(value.type).is_float
    except ValueError:
        return False
