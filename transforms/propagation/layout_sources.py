"""Why two layouts meet: the statements behind each side of a reshard or a pending sum.

Every layout the solver gives a dim comes from one seed (`Solver.source`): a layout rule, a
layout written on a type, or an `mtf.shard`. Where propagation leaves a reshard, or an op
contracts a split dim (its result will be a pending sum), these functions describe both
sides as `Provenance` (dialect/provenance.py); reshards.py puts it on the location of the
`mtf.shard` or the op, and collective insertion moves it onto the collectives it emits.
Only those places pay for it: a few per layer.
"""
from __future__ import annotations

from meshir.dialect.diagnostics import format_location
from meshir.dialect.provenance import (
    DEFAULT,
    OP,
    PENDING_KEY,
    RULE,
    SHARD,
    WHOLE_KEY,
    WRITTEN,
    LayoutSource,
    Provenance,
)
from meshir.dialect.tensor_type import TensorType, format_axes

from .rule import OpRule
from .program_values import FunctionValues
from .seeds import ANNOTATION, SHARD as SHARD_PRIORITY
from .solver import Solver


def source_of(values: FunctionValues, solver: Solver, key, axes) -> LayoutSource:
    """The statement behind (value id, dim)'s layout `axes`."""
    seed, dim = solver.source(key), key[1]
    if seed is None:
        return LayoutSource(dim, axes, DEFAULT, "no rule or written layout reaches it (replicated)")
    # A statement preferred by cost (conflicts.py) won where it met another of its priority.
    won = ", preferred where it met a layout of equal priority: cheaper" if (seed.value, seed.dim) in solver.preferred else ""
    if seed.priority > ANNOTATION:
        renamed = f", reaching '{dim}' through a rename" if seed.dim != dim else ""
        return LayoutSource(dim, axes, RULE, f"layout rule {seed.dim}:{format_axes(seed.axes)}{renamed}{won}", seed.dim)
    info = values.values[seed.value]
    where = format_location(info.location)
    if seed.priority == SHARD_PRIORITY:
        return LayoutSource(dim, axes, SHARD, f"mtf.shard at {where}{won}", where=where)
    what = "an argument" if info.owner is None else f"the result of {info.owner.operation.name}"
    return LayoutSource(dim, axes, WRITTEN, f"layout written on {what} at {where}{won}", where=where)


def needed_source(rule: OpRule, values, solver: Solver, wanted: dict, key, axes) -> LayoutSource:
    """The statement behind the layout `axes` an op computes (value id, dim) in: the strongest
    member of its factor, or the op itself when it cut that layout short (one mesh axis per
    op) or the dim is in no factor (a dim it computes along, a collective's changed dim)."""
    name = rule.op.operation.name
    factor = next((members for members in rule.factors if key in members), None)
    if factor is None:
        return LayoutSource(key[1], axes, OP, f"{name} needs it so")
    best = min(factor, key=solver.strength)
    full = solver.final(best)
    if tuple(axes) == full:
        return source_of(values, solver, best, axes)
    lost = full[len(axes)] if len(full) > len(axes) else None
    holder = next((d for (v, d), a in wanted.items() if d != key[1] and lost in a), None)
    why = f"mesh axis {lost} is taken by '{holder}' in {name}" if holder else f"{name} computes it so"
    return LayoutSource(key[1], axes, OP, f"one mesh axis per op: {why}")


def reshard_provenance(rule: OpRule, values, solver: Solver, wanted: dict, vid: int, have: TensorType,
                       need: TensorType, operand: int | None) -> Provenance:
    """Why an operand (`operand` = its position) or a result (None) is resharded."""
    name = rule.op.operation.name
    dims = tuple(d.name for d, n in zip(have.dims, need.dims) if (d.axes or ()) != (n.axes or ()))
    have_text = ", ".join(f"{d}@{format_axes(have.dim(d).axes or ())}" for d in dims)
    need_text = ", ".join(f"{d}@{format_axes(need.dim(d).axes or ())}" for d in dims)
    sources = []
    for d in dims:
        sources.append(source_of(values, solver, (vid, d), have.dim(d).axes or ()))
        sources.append(needed_source(rule, values, solver, wanted, (vid, d), need.dim(d).axes or ()))
    if operand is None:
        reason = f"{name} computes its result with {need_text}, but the result is laid out {have_text}"
    else:
        reason = f"{name} computes with {need_text}, but operand #{operand} is laid out {have_text}"
    return Provenance(name, dims, reason, tuple(sources))


def op_provenance(rule: OpRule, values, solver: Solver, wanted: dict,
                  needs: dict[int, TensorType]) -> dict[str, Provenance]:
    """What an op will need collectives for, by carrier key: the reduction it leaves pending
    (PENDING_KEY) and the split dims it computes along whole (WHOLE_KEY)."""
    out = {}
    pending = pending_provenance(rule, values, solver, wanted, needs)
    if pending is not None:
        out[PENDING_KEY] = pending
    if rule.op.WHOLE_DIM_ATTRS:
        whole = whole_provenance(rule, values, solver, needs)
        if whole is not None:
            out[WHOLE_KEY] = whole
    return out


def whole_provenance(rule: OpRule, values, solver: Solver, needs: dict[int, TensorType]) -> Provenance | None:
    """Why an op that computes along dims (slice, concat, pad, shift) gathers them and splits
    its result again: the statements that split those dims in its operands and result."""
    name, sources = rule.op.operation.name, []
    whole = rule.op.whole_dims()
    kept_operands, kept_results = rule.op.kept_split_values()
    for k, vid in enumerate(rule.operands):
        if k not in kept_operands:
            sources += [source_of(values, solver, (vid, d), needs[vid].dim(d).axes) for d in whole
                        if needs[vid].has(d) and needs[vid].dim(d).axes]
    for k, vid in enumerate(rule.results):
        if k not in kept_results:
            sources += [source_of(values, solver, (vid, d), solver.final((vid, d))) for d in whole
                        if solver.final((vid, d))]
    if not sources:
        return None
    dims = tuple(dict.fromkeys(s.dim for s in sources))
    return Provenance(name, dims, f"{name} computes along {', '.join(map(repr, dims))}, which it needs whole",
                      tuple(dict.fromkeys(sources)))


def pending_provenance(rule: OpRule, values, solver: Solver, wanted: dict,
                       needs: dict[int, TensorType]) -> Provenance | None:
    """Why an op's result will be pending: the operand dims it reduces over (its REDUCTION:
    dims no result has) or looks up (LOOKUP_DIM_ATTRS) while they are split, as
    dialect/local_semantics.py reads the same traits; None when there are none. `needs`: each
    operand id's type as the op computes with it."""
    op = rule.op
    reduces, looked_up = getattr(op, "REDUCTION", None) is not None, op.lookup_dims() if op.LOOKUP_DIM_ATTRS else ()
    if not (reduces or looked_up):
        return None
    kept = {n for vid in rule.results for n in values.values[vid].type.names} if reduces else set()
    sources = []
    for position, vid in enumerate(rule.operands):
        t = needs[vid]
        for d in t.dims:
            if d.axes and ((reduces and d.name not in kept) or (position == 0 and d.name in looked_up)):
                sources.append(source_of(values, solver, (vid, d.name), d.axes)
                               if solver.final((vid, d.name)) == d.axes else
                               needed_source(rule, values, solver, wanted, (vid, d.name), d.axes))
    if not sources:
        return None
    name = op.operation.name
    dims = tuple(dict.fromkeys(s.dim for s in sources))
    verb = "reduces over" if reduces else "looks up"
    return Provenance(name, dims, f"{name} {verb} {', '.join(map(repr, dims))} while split, leaving the "
                      f"reduction pending", tuple(dict.fromkeys(sources)))


def call_provenance(callee: str, position: int, have: TensorType, need: TensorType) -> Provenance:
    """Why a call's operand is resharded: the callee (propagated first) takes it otherwise."""
    dims = tuple(d.name for d, n in zip(have.dims, need.dims) if (d.axes or ()) != (n.axes or ()))
    sources = tuple(LayoutSource(d, need.dim(d).axes or (), OP, f"@{callee}'s argument #{position}") for d in dims)
    return Provenance("func.call", dims, f"@{callee} takes argument #{position} laid out otherwise", sources)
