"""The sharding rule of each op: which (value, dim) pairs must share a layout.

A *factor* is a set of (value id, dim name) pairs that describe the same index space, so a
layout on one applies to all (Shardy's factors; in MeshIR mostly "the same name"). Reshape
relates groups of dims by merging and splitting instead (`ReshapeGroup`). Dims that an op
does not let through (the along-dim of slice, concat and pad; dims a collective changes)
belong to no factor.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from meshir.dialect.ops import COLLECTIVE_OP_NAMES

from .program_values import FunctionValues

Member = tuple[int, str]  # (value id, dim name)

#: Ops whose dims stay apart: each value keeps the layout it is given.
NO_FACTORS = frozenset({"mtf.constant", "mtf.iota", "mtf.random_uniform", "mtf.random_normal"})
#: Attributes naming dims that an op moves data along, so layouts do not pass through them.
ALONG_DIM_ATTRS = {
    "mtf.slice": ("dim",),
    "mtf.concat": ("dim",),
    "mtf.pad": ("dim",),
    "mtf.all_gather": ("dim",),
    "mtf.all_slice": ("dim",),
    "mtf.reduce_scatter": ("dim",),
    "mtf.all_to_all": ("src_dim", "dst_dim"),
}
#: Ops that change layouts on purpose: they relay layouts but never get reshards.
LAYOUT_OPS = COLLECTIVE_OP_NAMES | {"mtf.shard"}


@dataclass
class ReshapeGroup:
    """Operand dims whose row-major merge equals the merge of these result dims."""

    operand: int
    operand_dims: list[str]
    result: int
    result_dims: list[str]


@dataclass
class OpRule:
    """The factors and reshape groups of one op."""

    op: object
    operands: list[int]
    results: list[int]
    factors: list[list[Member]] = field(default_factory=list)
    reshapes: list[ReshapeGroup] = field(default_factory=list)


def op_rule(op, values: FunctionValues) -> OpRule | None:
    """The rule of an op, or None for ops without `!mtf.tensor` operands and results."""
    operands = [values.id_of(v) for v in op.operation.operands]
    results = [values.id_of(v) for v in op.operation.results]
    if any(i is None for i in operands + results) or not (operands or results):
        return None
    rule = OpRule(op, operands, results)
    name = op.operation.name
    if name in NO_FACTORS or not name.startswith("mtf."):
        return rule
    if name == "mtf.rename":
        src, dst = values.values[operands[0]].type, values.values[results[0]].type
        rule.factors = [[(operands[0], a), (results[0], b)] for a, b in zip(src.names, dst.names)]
    elif name == "mtf.reshape":
        rule.reshapes = reshape_groups(values.values[operands[0]].type, values.values[results[0]].type,
                                       operands[0], results[0])
    else:
        rule.factors = _by_name(op, operands + results, values)
    return rule


def changed_dims(op, values: FunctionValues, operand: int, result: int) -> set[str]:
    """The dims whose layout an op changes on purpose: those its along-dim attributes name,
    and for a collective_permute the dims written with a different layout on each side (the
    layout it was given; a dim free on either side is not moved)."""
    changed = {op.attr(a) for a in ALONG_DIM_ATTRS.get(op.operation.name, ())}
    if op.operation.name == "mtf.collective_permute":
        src, dst = values.values[operand].type, values.values[result].type
        changed |= {d.name for d in src.dims if d.axes is not None and dst.dim(d.name).axes not in (None, d.axes)}
    return changed


def _by_name(op, ids: list[int], values: FunctionValues) -> list[list[Member]]:
    """One factor per name of the op's values. A name only one value has is a factor too:
    it passes nothing on, but Mesh-TensorFlow's one-axis-per-op rule counts it. The dims a
    collective changes are not factors: each side keeps the layout written for it."""
    excluded = changed_dims(op, values, ids[0], ids[-1]) if op.operation.name in COLLECTIVE_OP_NAMES else {
        op.attr(a) for a in ALONG_DIM_ATTRS.get(op.operation.name, ())}
    members: dict[str, list[Member]] = {}
    for i in ids:
        for n in values.values[i].type.names:
            if n not in excluded:
                members.setdefault(n, []).append((i, n))
    return list(members.values())


def reshape_groups(src, dst, src_id: int, dst_id: int) -> list[ReshapeGroup]:
    """Split both shapes into minimal runs of dims with equal element counts (row-major)."""
    groups, i, j = [], 0, 0
    while i < src.rank or j < dst.rank:
        a, b, count_a, count_b = [], [], 1, 1
        if i < src.rank:
            a, count_a, i = [src.names[i]], src.shape[i], i + 1
        if j < dst.rank:
            b, count_b, j = [dst.names[j]], dst.shape[j], j + 1
        while count_a != count_b:
            if count_a < count_b and i < src.rank:
                a.append(src.names[i])
                count_a, i = count_a * src.shape[i], i + 1
            elif count_b < count_a and j < dst.rank:
                b.append(dst.names[j])
                count_b, j = count_b * dst.shape[j], j + 1
            else:  # unreachable for verified reshapes (equal element counts)
                break
        groups.append(ReshapeGroup(src_id, a, dst_id, b))
    return groups
