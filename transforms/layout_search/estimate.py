"""The predicted cost of a program under a rule set, from its summary (summary.py).

A rule set maps each dim name to axes; every value is laid out by its dims' axes, and each
op group then costs, per device and per run of the program:

- **FLOPs**: its `WORK` over the local index space (a dim of size n split over axes of
  product k has n/k local points);
- **collectives**: an op that reduces over (or looks up along) split dims leaves its result
  pending over their axes: one all_reduce of the result's shard, priced by the one cost
  model (`CostModel.price`: bytes by the ring formulas, α–β seconds); a dim it needs whole
  that is split: one all_gather of its shard;
- **memory**: arguments and results per device, plus the peak of the live temporaries: the
  largest of the summary's live profiles (memory_estimate.py's liveness walk on the
  unpartitioned program) priced with this rule set's shards. It leaves out the collectives'
  own buffers and the layout changes partitioning adds, and propagation may split a
  temporary further than the rules say (so the budget cuts by `floor`, the arguments and
  results alone); the chosen candidates are re-measured by the real pipeline's memory
  estimate.

Time = compute (FLOPs / the device's throughput) + communication, no overlap (cost_model.py).
`lower_bound` prices a partial rule set: every dim not yet assigned counted as split as far as
the axes its ops leave free allow, no collective that an unassigned dim could change: no
completion of the partial rule set costs less (the search's branch-and-bound).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .summary import OpGroup, ProgramSummary

#: FLOP/s per device when the cost model names no device kind (an accelerator's order of
#: magnitude; with links at their default only the ratio of compute to communication matters).
DEFAULT_FLOPS_PER_S = 1e13


@dataclass(frozen=True)
class Estimate:
    """Predicted cost per device of one run: FLOPs, collectives by kind, seconds, memory."""
    flops: float
    bytes_by_kind: tuple[tuple[str, int], ...]
    comm_seconds: float
    compute_seconds: float
    memory: int
    collectives: int = 0
    largest: tuple = field(default=(), compare=False)
    #: What no partitioning under these rules goes below: arguments and results, whose
    #: layouts the rules fix. The budget cuts by it: propagation may split a temporary
    #: further than its dims' rules (a dim renamed from one the rules split), so `memory`
    #: may overestimate, and an overestimate must not cut a candidate that fits.
    floor: int = 0

    @property
    def bytes(self) -> int:
        return sum(b for _, b in self.bytes_by_kind)

    @property
    def seconds(self) -> float:
        return self.compute_seconds + self.comm_seconds


def compute_seconds(model, flops: float) -> float:
    """FLOPs per device at the device kind's throughput (the cost model's, when it has one)."""
    if hasattr(model, "compute_seconds") and getattr(model, "device", None) is not None:
        return model.compute_seconds(flops)
    return flops / DEFAULT_FLOPS_PER_S


class Estimator:
    """Prices rule sets for one program summary on one mesh under one cost model."""

    def __init__(self, summary: ProgramSummary, mesh_shape: dict[str, int], model):
        self.summary, self.mesh_shape, self.model = summary, dict(mesh_shape), model
        self.groups = list(summary.groups.items())
        self.linked = _classes(summary.renamed)

    def split(self, rules: dict, name: str) -> int:
        return math.prod(self.mesh_shape[a] for a in rules.get(name, ()))

    def local(self, rules: dict, names, sizes: dict) -> int:
        return math.prod(sizes[n] // self.split(rules, n) for n in names)

    def estimate(self, rules: dict) -> Estimate:
        flops, kinds, seconds, count = 0.0, {}, 0.0, 0
        for g, n in self.groups:
            space = dict(g.space)
            result_bytes = self.local(rules, g.result, space) * g.itemsize
            flops += n * _work(g, lambda names: self.local(rules, names, space))
            for kind, axes in self._collectives(g, rules):
                cost = self.model.price(kind, result_bytes, axes, self.mesh_shape)
                kinds[kind] = kinds.get(kind, 0) + n * cost.bytes_per_device
                seconds += n * cost.seconds
                count += n
        local = lambda dims: math.prod(size // self.split(rules, n) for n, size in dims)  # noqa: E731
        floor = lambda dims: math.prod(  # noqa: E731  (a split may cross a rename: the most its names have)
            max(1, size // max(self.split(rules, m) for m in self.linked.get(n, (n,)))) for n, size in dims)
        return Estimate(flops, tuple(sorted(kinds.items())), seconds, compute_seconds(self.model, flops),
                        self._memory(local), count, floor=self._fixed(floor))

    def _fixed(self, local) -> int:
        """Arguments + results, `local(dims)` elements each."""
        return sum(local(dims) * size for dims, size in self.summary.arguments + self.summary.results)

    def _memory(self, local) -> int:
        """Arguments + results + the largest live temporaries, `local(dims)` elements each."""
        peaks = (sum(n * local(dims) * size for (dims, size), n in live.items()) for live in self.summary.temporaries)
        return self._fixed(local) + max(peaks, default=0)

    @staticmethod
    def _collectives(g: OpGroup, rules: dict):
        pending = tuple(a for n in g.reduced for a in rules.get(n, ()))
        if pending:
            yield "all_reduce", pending
        gathered = tuple(a for n in g.whole for a in rules.get(n, ()))
        if gathered:
            yield "all_gather", gathered

    def lower_bound(self, rules: dict, assigned: set) -> Estimate:
        """No rule set that keeps `rules` on the `assigned` dims costs less (module docstring)."""
        flops, kinds, seconds = 0.0, {}, 0.0
        for g, n in self.groups:
            space = dict(g.space)
            free = self._free_split(g, rules, assigned)
            local = lambda names: math.prod(  # noqa: E731
                max(1, space[x] // self.split(rules, x)) if x in assigned else max(1, space[x] // min(space[x], free))
                for x in names)
            flops += n * _work(g, local)
            if set(g.reduced) | set(g.whole) | set(g.result) <= assigned:
                result_bytes = self.local(rules, g.result, space) * g.itemsize
                for kind, axes in self._collectives(g, rules):
                    cost = self.model.price(kind, result_bytes, axes, self.mesh_shape)
                    kinds[kind] = kinds.get(kind, 0) + n * cost.bytes_per_device
                    seconds += n * cost.seconds
        free = math.prod(self.mesh_shape.values())  # an unassigned dim: split as far as the mesh goes
        local = lambda dims: math.prod(size // self.split(rules, x) if x in assigned  # noqa: E731
                                       else max(1, size // min(size, free)) for x, size in dims)
        floor = lambda dims: math.prod(  # noqa: E731  (a name linked to an unassigned one: split as far as can be)
            max(1, size // max(self.split(rules, m) for m in self.linked.get(x, {x})))
            if self.linked.get(x, {x}) <= assigned else max(1, size // min(size, free)) for x, size in dims)
        return Estimate(flops, tuple(sorted(kinds.items())), seconds, compute_seconds(self.model, flops),
                        self._memory(local), floor=self._fixed(floor))

    def _free_split(self, g: OpGroup, rules: dict, assigned: set) -> int:
        used = {a for x, _ in g.space if x in assigned for a in rules.get(x, ())}
        return math.prod(s for a, s in self.mesh_shape.items() if a not in used)


def _classes(pairs: set) -> dict[str, set]:
    """name -> every name linked to it by a chain of renames (itself included)."""
    classes: dict[str, set] = {}
    for pair in pairs:
        merged = set(pair).union(*(classes.get(n, set()) for n in pair))
        for n in merged:
            classes[n] = merged
    return classes


def _work(g: OpGroup, local) -> float:
    names = [n for n, _ in g.space]
    if g.work == "index_space":
        return 2.0 * local(names)
    if g.work == "result":
        return float(local(g.result))
    if g.work == "operand":
        return float(local(names))
    return 0.0
