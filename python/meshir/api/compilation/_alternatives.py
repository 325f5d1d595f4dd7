"""The cheapest rule change that would remove a collective, found by compiling with it.

For each layout rule a collective's provenance names (`Provenance.rules`), the candidates are:
drop the rule, split the dim over each other mesh axis, or give it the layout the other side
had. Each distinct candidate is compiled once (propagation, collective insertion,
canonicalization: `mi.compile`'s passes, no lowering, no XLA) and priced by the bytes per
device the cost model recorded on its collectives; no other estimate. A candidate removes a
collective when it has no collective of the same kind, for the same op, changing the same
dims. Ops are matched across compilations by a tag on their locations (`NameLoc`s added to a
copy of the source module): nothing in the passes reads locations, so the tagged
compilation is the untagged one.

This runs only when explaining, outside `mi.compile`'s time.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.attribute_names import LAYOUT_RULES
from meshir.dialect import MeshIRError, get_context
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.provenance import RULE
from meshir.dialect.signature import defined_functions, is_mtf_function
from meshir.dialect.tensor_type import format_axes
from meshir.transforms import Pipeline
from meshir.transforms.collectives.records import collective_ops
from meshir.transforms.passes.partition import partition_passes


_TAG = "mtf.explain#"
_TAG_RE = re.compile(re.escape(_TAG) + r"(\d+)")


@dataclass(frozen=True)
class Alternative:
    """A rule change, what compiling with it costs, and the collective it removes.

    `dim`, `axes`: the rule changed (`axes` None: the rule dropped); `rules`: every layout
    rule given at compile time after the change (what to pass as `mi.compile(layout=...)`
    when the rule was given there); `total_bytes`: the program's bytes per device with the
    change (`base_bytes` without); `removed`: bytes of this collective; `added`: (kind, bytes)
    of the collectives the change adds."""

    dim: str
    axes: tuple[str, ...] | None
    was: tuple[str, ...]
    rules: LayoutRules
    base_bytes: int
    total_bytes: int
    removed: int
    added: tuple[tuple[str, int], ...]

    @property
    def change(self) -> str:
        if self.axes is None:
            return f"dropping layout rule {self.dim}:{format_axes(self.was)} ({self.dim} replicated)"
        return f"splitting {self.dim} over {format_axes(self.axes)} instead of {format_axes(self.was)}"

    @property
    def elsewhere(self) -> int:
        """What the change costs outside this collective (negative: it saves more)."""
        return self.total_bytes - self.base_bytes + self.removed

    def __str__(self) -> str:
        added = ", ".join(f"{kind} ({size_text(b)})" for kind, b in self.added[:3])
        more = f" and {len(self.added) - 3} more" if len(self.added) > 3 else ""
        adds = f"add {added}{more}" if added else "add nothing"
        return (f"{self.change} would remove this collective ({size_text(self.removed)}) and {adds}: "
                f"{size_text(self.base_bytes)} -> {size_text(self.total_bytes)} per device in all")


def size_text(n: int) -> str:
    """Bytes for people: 512 B, 1.0 kB, 2.5 MB."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def cheapest_alternatives(report) -> list[Alternative | None]:
    """Per collective of `report` (a CompileReport of explicit mode), the cheapest rule change
    that removes it, or None when no candidate does (a written layout, a hand-written
    collective, or every candidate keeps or fails)."""
    records = report.collectives
    if not records:
        return []
    source, rules, model = report.source, report.rules or LayoutRules(), report.cost_model
    tagged = _tagged(source)
    base = _compile(tagged, rules, model, None)
    if base is None or [(k, b) for _, k, b in base] != [(r.kind, r.bytes_per_device) for r in records]:
        raise MeshIRError("explain: recompiling the program did not reproduce its collectives (a MeshIR bug)")
    base_total = sum(b for _, _, b in base)
    base_keys = Counter(key for key, _, _ in base)
    mesh_axes = _mesh_axes(tagged)
    cache: dict = {}
    out = []
    for record, (key, _kind, nbytes) in zip(records, base):
        best = None
        for dim, axes, was in _candidates(record.provenance, rules, tagged, mesh_axes):
            if (dim, axes) not in cache:
                cache[(dim, axes)] = _compile(tagged, rules, model, (dim, axes))
            result = cache[(dim, axes)]
            if result is None:
                continue  # the change is not a valid layout for this program
            keys = Counter(k for k, _, _ in result)
            if keys[key]:
                continue
            total = sum(b for _, _, b in result)
            added = tuple((k[1], b) for k, _, b in result if keys[k] > base_keys[k])
            candidate = Alternative(dim, axes, was, _changed(rules, dim, axes), base_total, total, nbytes, added)
            if best is None or (total, axes is None) < (best.total_bytes, best.axes is None):
                best = candidate
        out.append(best)
    return out


def _candidates(provenance, rules: LayoutRules, module, mesh_axes):
    """(dim, new axes or None to drop, current axes) of each rule change worth trying."""
    if provenance is None:
        return
    for dim in provenance.rules:
        was = _rule_axes(rules, module, dim)
        if was is None:
            continue
        options = [None] + [(a,) for a in mesh_axes]
        options += [s.axes for s in provenance.sources if s.dim == dim and s.kind != RULE]
        for axes in dict.fromkeys(options):
            if axes != was and axes != ():
                yield dim, axes, was


def _rule_axes(rules: LayoutRules, module, dim: str):
    """The rule for `dim` the compilation used: given at compile time, else a function's."""
    if dim in rules:
        return rules[dim]
    for fn in defined_functions(module):
        own = LayoutRules.from_attribute(fn)
        if dim in own:
            return own[dim]
    return None


def _changed(rules: LayoutRules, dim: str, axes) -> LayoutRules:
    kept = tuple((n, a) for n, a in rules.rules if n != dim)
    return LayoutRules(kept + (((dim, axes),) if axes is not None else ()))


def _compile(tagged, rules: LayoutRules, model, change):
    """[(match key, kind, bytes)] of every collective of `tagged` compiled with `rules` and
    `change` ((dim, axes or None) applied to the rules and the functions' own), None when
    the change makes the program fail to compile."""
    with get_context():
        module = tagged.operation.clone()
        if change is not None:
            rules = _changed(rules, *change) if change[0] in rules else rules
            _change_function_rules(module, *change)
    try:
        partition(module, rules, model)
    except MeshIRError:
        if change is None:
            raise
        return None
    out = []
    for op, record in collective_ops(module):
        tag = _TAG_RE.search(str(op.location))
        out.append(((tag.group(1) if tag else "", record.kind, record.dims), record.kind, record.bytes_per_device))
    return out


def partition(module, rules: LayoutRules, model) -> None:
    """Run mi.compile's passes before the lowering on `module`, in place."""
    Pipeline(partition_passes(module, rules, model)).apply(module)


def _change_function_rules(module, dim: str, axes) -> None:
    for fn in defined_functions(module):
        own = LayoutRules.from_attribute(fn)
        if dim in own:
            new = _changed(own, dim, axes)
            fn.attributes[LAYOUT_RULES] = ir.DictAttr.get(
                {n: ir.ArrayAttr.get([ir.StringAttr.get(a) for a in ax]) for n, ax in new.rules})


def _tagged(source):
    """A copy of `source` whose ops' locations carry their index (for matching)."""
    with get_context():
        module = source.operation.clone()
        index = 0
        for fn in defined_functions(module):
            if not is_mtf_function(fn):
                continue
            for op in fn.regions[0].blocks[0].operations:
                op.operation.location = ir.Location.name(f"{_TAG}{index}", childLoc=op.location)
                index += 1
    return module


def _mesh_axes(module) -> tuple[str, ...]:
    meshes = module_meshes(module.operation)
    axes = []
    for fn in defined_functions(module):
        mesh = function_mesh(fn, meshes)
        if mesh is not None:
            axes += [a for a, _ in mesh.axes if a not in axes]
    return tuple(axes)
