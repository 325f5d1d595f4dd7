"""Choosing a layout: search the model's space, then measure the best few for real.

`choose_layout` runs the search (search.py) on the program's summary, then partitions the
program with the best candidates through `mi.compile`'s own passes (transforms/partition.py),
in the model's order, until `measure` of them fit the memory budget by the real estimate
(transforms/memory_estimate.py; the model's memory is only a floor): their measured
collectives (bytes by kind, α–β seconds) and memory replace the predictions, they are ranked
again by what was measured, and those over the budget are dropped. The API (`mi.auto_layout`, `mi.compile(layout="auto")`) and the pass
(`mtf-auto-layout`) both call it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from meshir.dialect.diagnostics import MeshIRError, MeshIRValueError
from meshir.dialect.layout_rules import LayoutRules

from .estimate import Estimate, Estimator
from .search import OBJECTIVES, Found, key, options, search
from .summary import summarize


@dataclass
class Candidate:
    """One rule set with its predicted cost; `measured` once partitioned for real."""
    rules: dict
    predicted: Estimate
    measured: Estimate | None = None
    largest: tuple = field(default=(), repr=False)

    @property
    def cost(self) -> Estimate:
        return self.measured or self.predicted


@dataclass
class Choice:
    chosen: Candidate
    candidates: list[Candidate]
    objective: str
    exact: bool
    gap: float
    visited: int
    seconds: float


def choose_layout(module, fn, mesh, model, objective: str = "time", memory_budget: int | None = None,
                  time_limit: float = 10.0, fixed: dict | None = None, keep: int = 10, measure: int = 3) -> Choice:
    """The best rule set for `fn` of `module` (an mtf module before propagation) on `mesh`."""
    if objective not in OBJECTIVES:
        raise MeshIRValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    summary = summarize(fn)
    mesh_shape = dict(mesh.axes)
    fixed = {**LayoutRules.from_attribute(fn), **(fixed or {})}
    _check_fixed(summary, mesh_shape, {**summary.fixed, **fixed})
    estimator = Estimator(summary, mesh_shape, model)
    scale, tried = 1.0, []
    for _ in range(4):  # the model's memory is a floor: tighten its budget by what was measured
        result = search(estimator, objective, None if memory_budget is None else int(memory_budget * scale),
                        time_limit, fixed, keep)
        if not result.candidates:
            break
        candidates = [Candidate(f.rules, f.estimate) for f in result.candidates]
        fitting, rest = _measure_until_fit(module, fn, candidates, model, mesh_shape, memory_budget, measure)
        tried += [c for c in candidates if c.measured is not None]
        if fitting or rest or memory_budget is None:
            fitting.sort(key=lambda c: Found(c.rules, c.cost).sort_key(objective))
            ranked = fitting + rest
            return Choice(ranked[0], ranked, objective, result.exact, result.gap, result.visited, result.seconds)
        scale = min(scale, min(c.predicted.memory / c.measured.memory for c in candidates if c.measured.memory))
    if tried:
        least = min(tried, key=lambda c: c.measured.memory)
        _no_fit(module, fn, Found(least.rules, least.predicted), model, memory_budget)
    if result.over_budget:
        _no_fit(module, fn, result.over_budget[0], model, memory_budget)
    raise MeshIRError("no layout is legal for this program on mesh "
                      f"<{mesh.format_axes()}>{_constraints_text(summary.fixed, fixed)}")


def _measure_until_fit(module, fn, candidates, model, mesh_shape, budget, measure):
    """(measured candidates that fit, the rest unmeasured): measured in the model's order
    until `measure` fit the budget by the real estimate."""
    fitting, rest = [], []
    for c in candidates:
        if len(fitting) >= measure:
            rest.append(c)
            continue
        measure_candidate(module, fn, c, model, mesh_shape)
        if budget is None or c.measured.memory <= budget:
            fitting.append(c)
    return fitting, rest


def measure_candidate(module, fn, candidate: Candidate, model, mesh_shape: dict) -> None:
    """Partition with the candidate's rules; its collectives and memory per device, measured."""
    from meshir.api.compile_report import collectives_of
    from meshir.transforms.memory_estimate import estimate_memory
    from meshir.transforms.pass_manager import Pipeline

    from ..partition import partition_passes

    work = module.operation.clone()
    rules = LayoutRules.of({k: v for k, v in candidate.rules.items() if v})
    Pipeline(partition_passes(work, rules, model)).apply(work)
    kinds, seconds, count = {}, 0.0, 0
    for c in collectives_of(work):
        n = c.repeats or 1
        kinds[c.kind] = kinds.get(c.kind, 0) + n * c.bytes_per_device
        seconds += n * model.sent_seconds(c.kind, c.bytes_per_device, c.axes, mesh_shape)
        count += n
    memory = estimate_memory(work, _name(fn))
    candidate.measured = replace(candidate.predicted, bytes_by_kind=tuple(sorted(kinds.items())),
                                 comm_seconds=seconds, memory=memory.total, collectives=count)
    candidate.largest = tuple(memory.largest)


def _name(fn) -> str:
    return fn.attributes["sym_name"].value


def _check_fixed(summary, mesh_shape: dict, fixed: dict) -> None:
    """A fixed rule (the user's, or a `mtf.shard` pin) that no candidate can keep: an error naming it."""
    for name, axes in fixed.items():
        unknown = [a for a in axes if a not in mesh_shape]
        if unknown:
            raise MeshIRValueError(f"the layout constraint {name}:{','.join(axes)} names axis "
                                   f"'{unknown[0]}', not one of the mesh's ({', '.join(mesh_shape)})")
        if name in summary.dims and tuple(axes) not in options(name, summary.dims[name], mesh_shape, summary, {}) \
                and tuple(sorted(axes, key=list(mesh_shape).index)) not in options(
                    name, summary.dims[name], mesh_shape, summary, {}):
            raise MeshIRValueError(f"the layout constraint {name}:{','.join(axes)} makes every candidate illegal: "
                                   f"'{name}' (size {summary.dims[name]}) cannot be split over those axes"
                                   + (" (a scan iterates over it)" if name in summary.unsplittable else ""))
    for t in summary.tensors:
        seen = {}
        for name in sorted(t):
            for a in fixed.get(name, ()):
                if a in seen:
                    raise MeshIRValueError(
                        f"the layout constraints {seen[a]}:{','.join(fixed[seen[a]])} and {name}:{','.join(fixed[name])} "
                        f"make every candidate illegal: a tensor has both '{seen[a]}' and '{name}', "
                        f"and one axis cannot split two dims of a tensor")
                seen[a] = name


def _constraints_text(pins: dict, fixed: dict) -> str:
    every = {**pins, **fixed}
    if not every:
        return ""
    return " under the constraints " + ", ".join(f"{k}:{','.join(v) or '()'}" for k, v in sorted(every.items()))


def _no_fit(module, fn, best: Found, model, budget: int) -> None:
    """No candidate fits the budget: the error gives the best one's memory and largest tensors."""
    from meshir.transforms.memory_estimate import format_bytes

    candidate = Candidate(best.rules, best.estimate)
    measure_candidate(module, fn, candidate, model, _mesh_shape(module, fn))
    rows = [f"  {t.value}: {t.type} ({t.kind}) {format_bytes(t.bytes)} per device" for t in candidate.largest]
    rules = ", ".join(f"{k}:{','.join(v)}" for k, v in sorted(candidate.rules.items()) if v) or "no split"
    raise MeshIRError(
        f"no layout fits the memory budget of {format_bytes(budget)} per device: the least memory a candidate "
        f"needs is about {format_bytes(candidate.measured.memory)} per device ({rules}); its largest tensors "
        f"per device:\n" + "\n".join(rows) + "\nuse a larger mesh, or a larger budget")


def _mesh_shape(module, fn) -> dict:
    from meshir.dialect.mesh import function_mesh, module_meshes

    return dict(function_mesh(fn, module_meshes(module.operation)).axes)


__all__ = ["Candidate", "Choice", "choose_layout", "key"]
