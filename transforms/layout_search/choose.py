"""Choosing a layout: search the model's space, then measure the best few for real.

`choose_layout` runs the search (search.py) on the program's summary, then partitions the
program with the best candidates through `mi.compile`'s own passes (transforms/passes/partition.py),
in the model's order, until `measure` of them fit the memory budget by the real estimate
(transforms/analysis/memory_estimate.py; the model's budget cut uses only a floor): their measured
collectives (bytes by kind, α–β seconds) and memory replace the predictions, they are ranked
again by what was measured, and those over the budget are dropped. The API (`mi.auto_layout`, `mi.compile(layout="auto")`) and the pass
(`mtf-auto-layout`) both call it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from meshir.dialect.diagnostics import MeshIRError, MeshIRValueError
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.signature import defined_functions, entry_function, signature

from ..collectives.records import collectives_of
from ..analysis.memory_estimate import estimate_memory, format_bytes
from ..passes.partition import partition_passes
from ..infra.pass_manager import Pipeline
from ..passes.shard_update import UpdatePlan, _scanned_dims, drop_parameter_markers, marker_fields, parameter_markers
from .estimate import Estimate, Estimator
from .search import OBJECTIVES, Found, key, key_of, options, search
from .summary import summarize

#: Searches before "no layout fits": the table found over budget by measurement is excluded
#: each time (the last search looks for the least memory).
ROUNDS = 4


@dataclass
class Candidate:
    """One rule set with its predicted cost; `measured` once partitioned for real.
    `shard_update`: for a step built with weight-update sharding, whether this candidate
    keeps it (True) or turns it off (False); None for other programs."""
    rules: dict
    predicted: Estimate
    measured: Estimate | None = None
    largest: tuple = field(default=(), repr=False)
    shard_update: bool | None = None

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


@dataclass
class Variant:
    """The program as one variant of the search space: as written, or (for a step built with
    weight-update sharding) with the sharding on or off; `adjust` as search() takes it."""
    module: object
    fn: object
    shard_update: bool | None = None
    adjust: object = None


def choose_layout(module, fn, mesh, model, objective: str = "time", memory_budget: int | None = None,
                  time_limit: float = 10.0, fixed: dict | None = None, keep: int = 10, measure: int = 3) -> Choice:
    """The best rule set for `fn` of `module` (an mtf module before propagation) on `mesh`."""
    if objective not in OBJECTIVES:
        raise MeshIRValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    mesh_shape = dict(mesh.axes)
    variants = _variants(module, fn, mesh, mesh_shape)
    estimators = [Estimator(summarize(v.fn), mesh_shape, model) for v in variants]
    summary = estimators[0].summary  # the first variant is `fn` as written
    fixed = {**LayoutRules.from_attribute(fn), **(fixed or {})}
    _check_fixed(summary, mesh_shape, fixed)  # the user's and the function's rules: an error names them
    try:  # pins (mtf.shard, an argument's layout) as rules for their dims' names, where they agree
        _check_fixed(summary, mesh_shape, {**summary.fixed, **fixed})
        fixed = {**summary.fixed, **fixed}
    except MeshIRError:  # pins on different values that no one rule set keeps: the partitioner reshards
        pass             # around each, so they stay constraints on their own values
    excluded, tried = [set() for _ in variants], []
    for round_ in range(ROUNDS):
        # the budget cuts only by a floor: a table that the measurement finds over budget is
        # excluded and the search runs again; the last round looks for the least memory
        goal = objective if round_ < ROUNDS - 1 else "memory"
        found, results = [], []
        for v, estimator, skip in zip(variants, estimators, excluded):
            result = search(estimator, goal, memory_budget, time_limit / len(variants), fixed, keep, v.adjust, skip)
            results.append(result)
            found += [(f, v) for f in result.candidates]
        found.sort(key=lambda fv: fv[0].sort_key(goal) + (fv[1].shard_update is False,))
        found = found[:keep]
        if not found:
            break
        candidates = [Candidate(f.rules, f.estimate, shard_update=v.shard_update) for f, v in found]
        by_candidate = {id(c): v for c, (_, v) in zip(candidates, found)}
        fitting, rest = _measure_until_fit(by_candidate, candidates, model, mesh_shape, memory_budget, measure)
        tried += [c for c in candidates if c.measured is not None]
        if fitting or memory_budget is None:
            fitting.sort(key=lambda c: Found(c.rules, c.cost).sort_key(objective) + (c.shard_update is False,))
            ranked = fitting + rest
            return Choice(ranked[0], ranked, objective, all(r.exact for r in results), max(r.gap for r in results),
                          sum(r.visited for r in results), sum(r.seconds for r in results))
        for c in candidates:
            excluded[variants.index(by_candidate[id(c)])].add(key_of(c.rules))
    if not tried:  # every table was over by the floor: measure the least-memory ones the search kept
        for r, v in zip(results, variants):
            for f in r.over_budget:
                tried.append(Candidate(f.rules, f.estimate))
                measure_candidate(v.module, v.fn, tried[-1], model, mesh_shape)
    if tried:
        _no_fit(min(tried, key=lambda c: c.measured.memory), memory_budget)
    raise MeshIRError("no layout is legal for this program on mesh "
                      f"<{mesh.format_axes()}>{_constraints_text(summary.fixed, fixed)}")


def _measure_until_fit(by_candidate, candidates, model, mesh_shape, budget, measure):
    """(measured candidates that fit, the rest unmeasured): measured in the model's order
    until `measure` fit the budget by the real estimate. With `measure=0`, nothing is
    measured: the candidates the model's memory puts within the budget, all of them (when
    there are none, the model may overestimate: they are measured until one fits)."""
    if measure == 0:
        fitting = [c for c in candidates if budget is None or c.predicted.memory <= budget]
        if fitting or budget is None:
            return fitting, []
        measure = 1
    fitting, rest = [], []
    for c in candidates:
        if len(fitting) >= measure:
            rest.append(c)
            continue
        v = by_candidate[id(c)]
        measure_candidate(v.module, v.fn, c, model, mesh_shape)
        if budget is None or c.measured.memory <= budget:
            fitting.append(c)
    return fitting, rest


def _variants(module, fn, mesh, mesh_shape) -> list[Variant]:
    """The program as written; a step built with weight-update sharding (markers waiting for
    mtf-shard-update) twice: with it, under the rule sets for which that pass finds its data
    axes and split dims (the memory it saves counted), and without it."""
    markers = parameter_markers(module.operation)
    if not markers:
        return [Variant(module, fn)]
    own, scanned = LayoutRules.from_attribute(fn), _scanned_dims(module.operation)
    sig = signature(fn)
    stored = {marker_fields(op)[0] for op in markers if marker_fields(op)[1] == "stored"}
    sizes = {d.name: d.size for t in sig.arg_types for d in t.dims}

    def saved(rules: dict) -> int | None:
        try:
            plan = UpdatePlan.of(fn, markers, mesh, own.merged(LayoutRules.of({k: v for k, v in rules.items() if v})),
                                 scanned)
        except MeshIRError:
            return None
        total = 0
        for name, t in zip(sig.arg_names, sig.arg_types):
            param = name.split("__", 1)[0]
            split = plan.splits.get(param)
            if split is None or (name == param and param not in stored):
                continue
            extra = 1
            for a in split[1]:
                if a not in rules.get(split[0], ()):
                    extra *= mesh_shape[a]
            local = t.dtype.itemsize
            for d in t.dims:
                n = 1
                for a in rules.get(d.name, ()):
                    n *= mesh_shape[a]
                local *= sizes[d.name] // n
            total += 2 * (local - local // extra)  # the argument and the result it becomes
        return total

    off = module.operation.clone()
    drop_parameter_markers(off)
    return [Variant(module, fn, True, saved), Variant(off, entry_function(off, fn.attributes["sym_name"].value), False)]


def measure_candidate(module, fn, candidate: Candidate, model, mesh_shape: dict) -> None:
    """Partition with the candidate's rules; its collectives and memory per device, measured."""
    work = module.operation.clone()
    for other in _other_entries(work, _name(fn)):  # the rules are this function's alone
        other.operation.erase()
    rules = LayoutRules.of({k: v for k, v in candidate.rules.items() if v})
    Pipeline(partition_passes(work, rules, model)).apply(work)
    kinds, seconds, count = {}, 0.0, 0
    for c in collectives_of(work):
        n = c.repeats or 1
        kinds[c.kind] = kinds.get(c.kind, 0) + n * c.bytes_per_device
        seconds += n * model.sent_seconds(c.priced_as, c.bytes_per_device, c.axes, mesh_shape)
        count += n
    memory = estimate_memory(work, _name(fn))
    candidate.measured = replace(candidate.predicted, bytes_by_kind=tuple(sorted(kinds.items())),
                                 comm_seconds=seconds, memory=memory.total, collectives=count)
    candidate.largest = tuple(memory.largest)


def _other_entries(module, name: str) -> list:
    """The public functions of `module` other than `name` (private ones are its callees)."""
    return [f for f in defined_functions(module) if _name(f) != name and "sym_visibility" not in f.attributes]


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


def _no_fit(least: Candidate, budget: int) -> None:
    """No candidate fits the budget: the error gives the measured one that needs least, its
    memory and its largest tensors."""
    rows = [f"  {t.value}: {t.type} ({t.kind}) {format_bytes(t.bytes)} per device" for t in least.largest]
    rules = ", ".join(f"{k}:{','.join(v)}" for k, v in sorted(least.rules.items()) if v) or "no split"
    raise MeshIRError(
        f"no layout fits the memory budget of {format_bytes(budget)} per device: the least memory a candidate "
        f"needs is about {format_bytes(least.measured.memory)} per device ({rules}); its largest tensors "
        f"per device:\n" + "\n".join(rows) + "\nuse a larger mesh, or a larger budget")


__all__ = ["Candidate", "Choice", "choose_layout", "key"]
