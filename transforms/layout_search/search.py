"""The search: which mesh axes each named dim goes to, exactly when it fits the time limit.

The space is every rule set the verifier accepts: each dim to a set of mesh axes whose
product divides its size, no axis on two dims that share a tensor, a scan's dim unsplit,
the user's rules and the program's `mtf.shard` pins kept. Axes of one dim are taken in the
mesh's order: another order of the same axes costs the same under the model.

"No split" (but the fixed points) is priced first, the incumbent a stopped search never does
worse than. Then depth-first branch and bound over the dims (largest first), each dim's
options tried in the order of their lower bound (estimate.py): a subtree whose bound cannot
beat the `keep`-th best candidate, or whose floor cannot fit the memory budget (and which
cannot need less than the over-budget candidates kept), is cut. Rule sets already measured
over the budget (`exclude`) are skipped. The candidates table is exact when the
search finishes. At the time limit it stops and returns the best found, with `gap`: how far
the best may be from optimal, relative to the bound of the whole space. Deterministic: no
randomness, ties go to fewer split dims, then to the rule set's text.
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass, field

from .estimate import Estimate, Estimator

OBJECTIVES = ("time", "bytes", "memory")


def key(e: Estimate, objective: str) -> tuple:
    if objective == "bytes":
        return (e.bytes, e.seconds, e.memory)
    if objective == "memory":
        return (e.memory, e.seconds, e.bytes)
    return (e.seconds, e.bytes, e.memory)


@dataclass
class Found:
    rules: dict
    estimate: Estimate

    def sort_key(self, objective: str) -> tuple:
        splits = sum(1 for a in self.rules.values() if a)
        return key(self.estimate, objective) + (splits, repr(sorted(self.rules.items())))


def key_of(rules: dict) -> str:
    """One text per rule set (dims left whole do not count)."""
    return repr(sorted((k, tuple(v)) for k, v in rules.items() if v))


@dataclass
class SearchResult:
    candidates: list[Found]
    exact: bool
    visited: int
    seconds: float
    gap: float = 0.0
    evaluated: int = 0  # complete rule sets priced
    over_budget: list[Found] = field(default_factory=list)


def options(name: str, size: int, mesh_shape: dict[str, int], summary, fixed: dict) -> list[tuple[str, ...]]:
    """The axes `name` may take: its fixed ones, or every mesh-ordered set that divides it."""
    if name in fixed:
        return [tuple(fixed[name])]
    if name in summary.unsplittable:
        return [()]
    axes = list(mesh_shape)
    out = []
    for r in range(len(axes) + 1):
        for combo in itertools.combinations(axes, r):
            product = 1
            for a in combo:
                product *= mesh_shape[a]
            if size % product == 0:
                out.append(combo)
    return out


def search(estimator: Estimator, objective: str = "time", memory_budget: int | None = None,
           time_limit: float = 10.0, fixed: dict | None = None, keep: int = 10, adjust=None,
           exclude: set | None = None) -> SearchResult:
    """The best `keep` rule sets (module docstring). `adjust(rules)`, when given, vets each
    complete rule set for another pass (weight-update sharding's data axes): None rejects
    it, else the bytes of memory per device that pass saves under it. `exclude`: rule sets
    (`key_of`) already measured over the budget. `fixed`: the rules every candidate keeps."""
    summary, mesh_shape = estimator.summary, estimator.mesh_shape
    fixed = dict(fixed or {})  # choose.py merges the program's pins in where they agree
    weight = {n: 0 for n in summary.dims}
    for g, count in summary.groups.items():
        for n, _size in g.space:
            weight[n] += count
    names = sorted(summary.dims, key=lambda n: (-summary.dims[n] * max(1, weight[n]), n))
    choices = {n: options(n, summary.dims[n], mesh_shape, summary, fixed) for n in names}
    neighbours = {n: set() for n in names}
    for t in summary.tensors:
        for a in t:
            neighbours[a] |= set(t) - {a}

    best: list[Found] = []
    over: list[Found] = []
    start, visited, exact, evaluated = time.perf_counter(), 0, True, 0
    root = estimator.lower_bound({}, set())

    def threshold():
        return best[-1].sort_key(objective)[:3] if len(best) >= keep else None

    seen: set = set(exclude or ())

    def consider(rules: dict) -> None:
        """A complete rule set: into the table, or among the over-budget ones kept."""
        nonlocal evaluated
        text = key_of(rules)
        if text in seen:
            return
        seen.add(text)
        saved = 0 if adjust is None else adjust(rules)
        if saved is None:
            return
        evaluated += 1
        estimate = estimator.estimate(rules)
        found = Found(dict(rules), dataclasses.replace(estimate, memory=estimate.memory - saved,
                                                       floor=estimate.floor - saved))
        if memory_budget is not None and found.estimate.floor > memory_budget:
            over.append(found)
            over.sort(key=lambda f: (f.estimate.memory,) + f.sort_key(objective))
            del over[3:]
            return
        best.append(found)
        best.sort(key=lambda f: f.sort_key(objective))
        del best[keep:]

    def visit(i: int, rules: dict, assigned: set) -> bool:
        nonlocal visited, exact
        visited += 1
        # anytime: stop once a candidate is found (or, for a variant that vets rule sets,
        # whatever it found: the other variant has candidates)
        if (best or over or adjust is not None) and time.perf_counter() - start > time_limit:
            exact = False
            return False
        if i == len(names):
            consider(rules)
            return True
        name = names[i]
        used = {a for other in neighbours[name] if other in assigned for a in rules.get(other, ())}
        ranked = []
        for axes in choices[name]:
            if used & set(axes):
                continue
            rules[name] = axes
            bound = estimator.lower_bound(rules, assigned | {name})
            ranked.append((key(bound, objective), len(axes) == 0, axes, bound))
        rules.pop(name, None)
        for bound_key, _, axes, bound in sorted(ranked, key=lambda r: (r[0], not r[1], r[2])):
            limit = threshold()
            if limit is not None and bound_key >= limit:
                continue
            if memory_budget is not None and bound.floor > memory_budget and len(over) >= 3 and \
                    bound.memory >= over[-1].estimate.memory:  # neither fits nor needs less than those kept
                continue
            rules[name] = axes
            if not visit(i + 1, rules, assigned | {name}):
                del rules[name]
                return False
            del rules[name]
        return True

    consider({n: tuple(fixed.get(n, ())) for n in names})  # no split but the fixed: the first incumbent
    visit(0, {}, set())
    elapsed = time.perf_counter() - start
    gap = 0.0
    if not exact and best:
        top, bound = key(best[0].estimate, objective)[0], key(root, objective)[0]
        gap = (top - bound) / top if top else 0.0
    return SearchResult(best, exact, visited, elapsed, gap, evaluated, over)
