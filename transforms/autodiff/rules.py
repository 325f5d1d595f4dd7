"""The table of VJP rules: operation name -> how to pull a cotangent back through the op.

A rule is `fn(em, op, ct, wanted) -> {operand index: cotangent}`: `em` an Emitter placed
where the backward ops go, `op` the forward op, `ct` the cotangent of its result, `wanted`
the operand indices whose cotangents are needed (the others are not computed). A returned
cotangent may carry names its operand lacks (e.g. the broadcast result's): the driver sums
them away and reorders (`Emitter.fit`), so each rule states only the math.

`differentiable(op)` says which operands a gradient can flow through: integer operands,
ids, conditions, and the inputs of comparisons, sign, floor and stop_gradient never carry
one (their VJP is zero, as in JAX).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from meshir.dialect.tensor_type import TensorType


@dataclass(frozen=True)
class Rule:
    fn: Callable | None  # None: no gradient flows through the op
    operands: Callable | None  # op -> differentiable operand indices; None means all of them


VJP_RULES: dict[str, Rule] = {}


def vjp(*names: str, operands: Callable | None = None):
    """Register `fn` as the VJP of the ops `names` (`operands`: see Rule)."""

    def register(fn):
        for name in names:
            VJP_RULES[name] = Rule(fn, operands)
        return fn

    return register


def no_gradient(*names: str) -> None:
    """Ops whose result does not depend differentiably on any operand (zero VJP)."""
    for name in names:
        VJP_RULES[name] = Rule(None, lambda op: ())


def differentiable(op) -> tuple[int, ...] | None:
    """Indices of the operands a gradient flows to; None for an op without a VJP rule."""
    rule = VJP_RULES.get(op.operation.name)
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
