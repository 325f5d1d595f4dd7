"""The sharding rule of each op: which (value, dim) pairs must share a layout.

A *factor* is a set of (value id, dim name) pairs that describe the same index space, so a
layout on one applies to all (Shardy's factors; in MeshIR mostly "the same name"). Reshape
relates groups of dims by merging and splitting instead (`ReshapeGroup`). Which of these an
op has is its FACTORS trait; the dims it does not let through (`unlinked_dims`: the dim of
slice, concat and pad; dims a collective changes) belong to no factor.
"""
from __future__ import annotations

from meshir.dialect.layout_projection import reshape_groups
from meshir.dialect.ops import OP_CLASSES

from .loops import loop_rules
from .program_values import FunctionValues
from .rule import Member, OpRule


def op_rules(op, values: FunctionValues) -> list[OpRule]:
    """The rules of an op: one, none for an op without `!mtf.tensor` values, one per carried
    value for a loop (loops.py)."""
    if getattr(OP_CLASSES.get(op.operation.name), "FACTORS", "none") == "carried":
        return loop_rules(op, values)
    rule = op_rule(op, values)
    return [] if rule is None else [rule]


def op_rule(op, values: FunctionValues) -> OpRule | None:
    """The rule of an op, or None for ops without `!mtf.tensor` operands and results."""
    operands = [values.id_of(v) for v in op.operation.operands]
    results = [values.id_of(v) for v in op.operation.results]
    if any(i is None for i in operands + results) or not (operands or results):
        return None
    rule = OpRule(op, operands, results)
    factors = getattr(OP_CLASSES.get(op.operation.name), "FACTORS", "none")
    if factors == "positional":
        src, dst = values.values[operands[0]].type, values.values[results[0]].type
        rule.factors = [[(operands[0], a), (results[0], b)] for a, b in zip(src.names, dst.names)]
    elif factors == "reshape":
        rule.reshapes = reshape_groups(values.values[operands[0]].type, values.values[results[0]].type,
                                       operands[0], results[0])
    elif factors == "by_name":
        rule.by_name = not changes_layout(op)
        rule.unlinked = op.unlinked_dims()
        rule.factors = _by_name(rule.unlinked, operands + results, values)
    return rule


def changes_layout(op) -> bool:
    """A layout constraint or collective: it relays layouts and never gets reshards."""
    return getattr(OP_CLASSES.get(op.operation.name), "CHANGES_LAYOUT", False)


def _by_name(excluded: set[str], ids: list[int], values: FunctionValues) -> list[list[Member]]:
    """One factor per name of the op's values. A name only one value has is a factor too:
    it passes nothing on, but Mesh-TensorFlow's one-axis-per-op rule counts it. The dims
    the op unlinks (a slice's dim, those a collective changes) are not factors: each side
    keeps the layout written for it."""
    members: dict[str, list[Member]] = {}
    for i in ids:
        for n in values.values[i].type.names:
            if n not in excluded:
                members.setdefault(n, []).append((i, n))
    return list(members.values())
