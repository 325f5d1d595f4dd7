"""Seeds of propagation: what the user stated, with its priority, and the checks on it.

Priorities (lower is stronger): an `mtf.shard` constraint (0) > a layout written on an
argument, a result or any op's type (1) > a layout rule (2). Dims a user wrote a layout
for are *fixed*: propagation never changes them; a different layout meeting them gets a
reshard. Rules only seed dims that nobody wrote a layout for.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from meshir.dialect.diagnostics import Diagnostic, MeshIRError, MeshIRValueError, format_location
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.ops import MtfOp, ShardOp
from meshir.dialect.tensor_type import format_axes

from .program_values import FunctionValues

SHARD, ANNOTATION, RULE, RENAMED_RULE = 0, 1, 2, 3


@dataclass(frozen=True)
class Seed:
    value: int
    dim: str
    axes: tuple[str, ...]
    priority: int


def fixed_dims(values: FunctionValues) -> list[Seed]:
    """Every dim with a written layout, with the priority of who wrote it."""
    seeds = []
    for info in values.values:
        priority = SHARD if isinstance(info.owner, ShardOp) else ANNOTATION
        seeds += [Seed(info.index, d.name, d.axes, priority) for d in info.type.dims if d.axes is not None]
    return seeds


def rule_seeds(values: FunctionValues, rules: LayoutRules, mesh, given: LayoutRules | None = None) -> list[Seed]:
    """Rules applied to every free dim of their name. A rule set that splits two dims of
    one value over one axis, or a split that does not divide, is the user's error; except
    that a split not dividing a dim whose layout is written (a program argument staged from
    an mi.Array, say) is no error: the rule does not lay that dim out. The error is at the
    value that met the rules; `given`, rules with an `origin` (the user's `mi.compile` line),
    adds a note there when one of its rules is involved, so both lines are named."""
    seeds, diags, involved = [], [], []
    for info in values.values:
        owners: dict[str, str] = {}
        pieces = info.owner.piece_dims() if isinstance(info.owner, MtfOp) else ()
        for d in info.type.dims:
            axes = rules.get(d.name)
            if axes is None:
                continue
            split = math.prod(mesh.shape[a] for a in axes)
            if d.size % split and (d.name in pieces or d.axes is not None):
                continue  # a piece comes out without the axes (mi.split); a written layout is not the rule's
            for a in axes:
                if a in owners:
                    diags.append(Diagnostic(info.location, f"layout rules split both '{owners[a]}' and '{d.name}' of "
                                            f"{info.type} over mesh axis '{a}'"))
                    involved += [owners[a], d.name]
                owners[a] = d.name
            if d.size % split:
                involved.append(d.name)
                diags.append(Diagnostic(info.location, f"layout rule {d.name}:{format_axes(axes)} does not divide "
                                        f"dimension '{d.name}' of size {d.size} (mesh axes {format_axes(axes)} have "
                                        f"{split} devices) in {info.type}"))
            if d.axes is None:
                seeds.append(Seed(info.index, d.name, axes, RULE))
    if diags:
        shown = _first_of_each(diags) + _given_here(given, involved)
        raise MeshIRError("\n".join(str(d) for d in shown), diags)
    return seeds


def _given_here(given: LayoutRules | None, involved: list[str]) -> list[Diagnostic]:
    """A note at the line that gave the rules, naming those of them the errors involve."""
    if given is None or given.origin is None:
        return []
    named = [n for n in dict.fromkeys(involved) if n in given]
    if not named:
        return []
    text = ", ".join(str(LayoutRules(((n, given[n]),))) for n in named)
    return [Diagnostic(given.origin, f"layout rule{'s' if len(named) > 1 else ''} {text} given here", "note")]


def _first_of_each(diags: list[Diagnostic]) -> list[Diagnostic]:
    """One diagnostic per distinct problem (a bad rule hits every value with its name): the
    first place it occurs, with how many other values share it."""
    groups: dict[str, list[Diagnostic]] = {}
    for d in diags:
        groups.setdefault(d.message.split(" in !mtf.tensor")[0].split(" of !mtf.tensor")[0], []).append(d)
    out = []
    for same in groups.values():
        more = f" (and {len(same) - 1} more values)" if len(same) > 1 else ""
        out.append(Diagnostic(same[0].location, same[0].message + more, same[0].severity))
    return out


def check_rules_on_mesh(rules: LayoutRules, mesh, location) -> None:
    """Every axis a rule names exists on the mesh, once per rule (`LayoutRules.problems_on`)."""
    diags = [Diagnostic(location, problem) for problem in rules.problems_on(mesh)]
    if diags:
        raise MeshIRValueError("\n".join(str(d) for d in diags), diags)


def check_shard_conflicts(values: FunctionValues) -> None:
    """Two user `mtf.shard` ops that constrain one value to different layouts contradict each
    other (reshards left by an earlier propagation, `reshard = true`, may differ)."""
    by_operand: dict[int, list] = {}
    for op in values.ops:
        if isinstance(op, ShardOp) and not op.attr("reshard"):
            vid = values.id_of(op.operation.operands[0])
            if vid is not None:
                by_operand.setdefault(vid, []).append(op)
    diags = []
    for vid, shards in by_operand.items():
        first = shards[0]
        for other in shards[1:]:
            for d in values.values[values.id_of(other.result)].type.dims:
                mine = values.values[values.id_of(first.result)].type.dim(d.name).axes
                if d.axes is not None and mine is not None and d.axes != mine:
                    diags.append(Diagnostic(
                        other.location,
                        f"conflicting mtf.shard constraints on {values.values[vid].value.get_name()}: "
                        f"'{d.name}' is @{format_axes(mine)} at {_where(first)} and @{format_axes(d.axes)} here",
                    ))
    if diags:
        raise MeshIRError("\n".join(str(d) for d in diags), diags)


def _where(op) -> str:
    return format_location(op.location)
