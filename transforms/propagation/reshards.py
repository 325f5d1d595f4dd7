"""Write the chosen layouts into the IR and leave an explicit reshard (`mtf.shard`) wherever
an op must see a layout other than the one its operand or result carries.

Each op computes in one *computation layout*: per factor, the layout of its strongest
member, with Mesh-TensorFlow's rule enforced: factors are taken in order of the strongest
layout an *operand* holds (then any member), and a later factor loses the axes an earlier one
took — so data already in place stays, and a differing result is resharded after the op. An operand laid out otherwise is resharded before the op; a
result whose value keeps another layout (it was written by the user) is resharded after it.
Collective insertion then turns each `mtf.shard` into collectives. Each reshard, and each op
that reduces over a split dim, carries why on its location (layout_sources.py), for the
provenance of the collectives that follow.
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.ops import ShardOp
from meshir.dialect.provenance import RESHARD_KEY, Provenance, with_carried
from meshir.dialect.signature import refresh_function_type
from meshir.dialect.tensor_type import TensorType

from meshir.dialect.layout_projection import merge_layouts, merge_prefix, split_layout

from .layout_sources import op_provenance, reshard_provenance
from .op_rules import changes_layout
from .rule import OpRule
from .program_values import FunctionValues
from .solver import WEAKEST, Solver


def final_type(values: FunctionValues, solver: Solver, vid: int) -> TensorType:
    """A value's type with every dim's final layout."""
    t = values.values[vid].type
    return t.with_layout({d: solver.final((vid, d)) for d in t.names})


def computation_layouts(rule: OpRule, solver: Solver) -> dict[tuple[int, str], tuple[str, ...]]:
    """(value id, dim) -> the layout the op computes that dim in, for every factor member."""
    operand_ids = set(rule.operands)

    def rank(members):
        # Layouts the operands hold first: data already in place is not moved; a result
        # laid out otherwise is resharded after the op (often a cheap reduce_scatter).
        held = [solver.strength(m) for m in members if m[0] in operand_ids]
        return (min(held, default=WEAKEST), min(solver.strength(m) for m in members))

    ranked = sorted((rank(members), f) for f, members in enumerate(rule.factors))
    taken: set[str] = set()
    out = {}
    for _, f in ranked:
        members = rule.factors[f]
        best = min(members, key=solver.strength)
        axes = []
        for a in solver.final(best):
            if a in taken:
                break
            axes.append(a)
        taken.update(axes)
        for m in members:
            out[m] = tuple(axes)
    return out


def carried_layouts(rule: OpRule, solver: Solver) -> dict[tuple[int, str], tuple[str, ...]]:
    """A loop's carried value: every member of a factor as its anchor (the first member) is
    laid out; replicated dims (a scan's scanned dim) whole (propagation/loops.py)."""
    out = {}
    for members in rule.factors:
        anchor = solver.final(members[0])
        out.update({m: anchor for m in members})
    out.update({m: () for m in rule.replicated})
    return out


def _reshape_layouts(rule: OpRule, values, solver, mesh) -> dict[tuple[int, str], tuple[str, ...]]:
    """Operand and result layouts a reshape can compute with: per group, the contiguous part
    of the result's split (merge_prefix), carried onto the operand's parts and back, so both
    sides describe the same blocks."""
    out = {}
    for group in rule.reshapes:
        result_type, operand_type = values.values[group.result].type, values.values[group.operand].type
        result_sizes = [result_type.size(d) for d in group.result_dims]
        operand_sizes = [operand_type.size(d) for d in group.operand_dims]
        merged = merge_prefix(result_sizes, [solver.final((group.result, d)) for d in group.result_dims], mesh)
        operand_parts = split_layout(merged, operand_sizes, mesh)
        agreed = merge_layouts(operand_sizes, operand_parts, mesh) or ()
        result_parts = split_layout(agreed, result_sizes, mesh)
        out.update({(group.operand, d): axes for d, axes in zip(group.operand_dims, operand_parts)})
        out.update({(group.result, d): axes for d, axes in zip(group.result_dims, result_parts)})
    return out


def _collective_layouts(rule: OpRule, values, solver) -> dict[tuple[int, str], tuple[str, ...]]:
    """A collective changes only the dims (and pending axes) it names; every other dim must
    keep one layout across it: the result's, cut before any axis the collective uses."""
    op, src, dst = rule.op, rule.operands[0], rule.results[0]
    changed = rule.unlinked
    src_type, dst_type = values.values[src].type, values.values[dst].type
    busy = set(op.attr("axes") or ()) | set(src_type.partial) | set(dst_type.partial)
    for d in changed:
        busy |= set(solver.final((src, d))) | set(solver.final((dst, d)))
    wanted = {}
    for d in dst_type.names:
        if d in changed:
            continue
        axes = []
        for a in solver.final((dst, d)):
            if a in busy:
                break
            axes.append(a)
        wanted[(src, d)] = wanted[(dst, d)] = tuple(axes)
    wanted.update(_collective_operand_layouts(op, src, dst, solver, changed))
    return wanted


def _collective_operand_layouts(op, src: int, dst: int, solver, changed: set[str]) -> dict:
    """The operand layout of the dims a collective changes, derived from its result's by the
    collective's own inverse (`operand_layouts`); a permute keeps each side as written."""
    inverse = op.operand_layouts(op.attribute_values(), lambda dim: solver.final((dst, dim)))
    if inverse is None:
        return {(v, d): solver.final((v, d)) for d in changed for v in (src, dst)}
    return {(src, d): axes for d, axes in inverse.items()}


def laid_out_ops(rules: list[OpRule]) -> list[OpRule]:
    """The ops propagation lays out (and may reshard around): `mtf` ops but constraints."""
    return [r for r in rules if r.op.operation.name.startswith("mtf.") and not isinstance(r.op, ShardOp)]


def op_layouts(rule: OpRule, values: FunctionValues, solver: Solver, mesh_shape) -> dict:
    """(value id, dim) -> the layout the op sees that dim in, for the dims it constrains."""
    if rule.carried:
        return carried_layouts(rule, solver)
    if changes_layout(rule.op):
        return _collective_layouts(rule, values, solver)
    if rule.reshapes:
        return _reshape_layouts(rule, values, solver, mesh_shape)
    return computation_layouts(rule, solver)


def rewrite_function(fn, values: FunctionValues, rules: list[OpRule], solver: Solver, mesh) -> int:
    """Retype every value, insert reshards, update the signature. Returns reshards inserted."""
    finals = {info.index: final_type(values, solver, info.index) for info in values.values}
    for info in values.values:
        info.value.set_type(finals[info.index].to_mlir())
    inserted = 0
    for rule in laid_out_ops(rules):
        wanted = op_layouts(rule, values, solver, mesh.shape)
        needs = {}
        for position, vid in zip(rule.operand_positions(), rule.operands):
            need = needs[vid] = seen_as(finals[vid], vid, wanted)
            if need != finals[vid]:
                why = reshard_provenance(rule, values, solver, wanted, vid, finals[vid], need, position)
                reshard_operand(rule.op, position, need, why)
                inserted += 1
        for vid in rule.results:
            need = seen_as(finals[vid], vid, wanted)
            if need != finals[vid]:
                why = reshard_provenance(rule, values, solver, wanted, vid, finals[vid], need, None)
                _reshard_result(rule.op, values.values[vid].value, need, finals[vid], why)
                inserted += 1
        if rule.by_name:  # collective insertion reads these where it completes or gathers
            carried = op_provenance(rule, values, solver, wanted, needs)
            if carried:
                rule.op.operation.location = with_carried(rule.op.location, carried)
    refresh_function_type(fn)
    return inserted


def seen_as(t: TensorType, vid: int, wanted) -> TensorType:
    """`t` laid out as the op computes: factor dims as `wanted`; every other dim keeps its
    layout up to the first axis a factor dim of this value took (one axis per tensor)."""
    layout = {d: wanted[(vid, d)] for d in t.names if (vid, d) in wanted}
    taken = {a for axes in layout.values() for a in axes} | set(t.partial)
    for d in t.dims:
        if d.name not in layout:
            kept = []
            for a in d.axes or ():
                if a in taken:
                    break
                kept.append(a)
            layout[d.name] = tuple(kept)
    return t.with_layout(layout)


def reshard_operand(op, position: int, need: TensorType, why: Provenance) -> None:
    """Insert `mtf.shard {reshard = true}` before `op` on its operand `position`, at `op`'s
    location carrying `why` (for collective insertion)."""
    operand = op.operation.operands[position]
    with with_carried(op.location, {RESHARD_KEY: why}):
        shard = ShardOp(need, [operand], {"reshard": ir.BoolAttr.get(True)}, ip=ir.InsertionPoint(op))
    op.operation.operands[position] = shard.result


def _reshard_result(op, value, need: TensorType, keep: TensorType, why: Provenance) -> None:
    value.set_type(need.to_mlir())
    with with_carried(op.location, {RESHARD_KEY: why}):
        shard = ShardOp(keep, [value], {"reshard": ir.BoolAttr.get(True)}, ip=ir.InsertionPoint.after(op))
    value.replace_all_uses_except(shard.result, shard.operation)
