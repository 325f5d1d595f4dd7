"""Plan the collectives that turn one layout into another: a shortest-path search.

A value's layout on the mesh (each dim's ordered mesh axes, plus the pending reduction axes)
is a state; each collective that applies to it is an edge to the state its `result_of`
gives, priced by the cost model (transforms/cost_model.py: bytes per device by default, or
α–β time when asked). Dijkstra's search from the source finds the cheapest sequence to the
target; ties go to fewer collectives, then to the first in a fixed order of edges, so plans
are deterministic. Every intermediate state is a legal type (one use per axis, each split
dividing its dim), so every emitted op verifies.

Edges from a state (the mesh's axes only, never pending axes the target keeps):

- `all_reduce` over any non-empty set of the pending axes the target does not keep;
- `reduce_scatter` of such axes (in any order) onto any dim where they are free;
- `all_gather` of a dim's k minor-most axes;
- `all_slice` of free axes (any order) onto any dim;
- `all_to_all` of a dim's k minor-most axes onto any other dim (several axes at once);
- `collective_permute` to any other layout with the same shard shape on every dim (the same
  axes moving between dims, or a dim's axes reordered).

Searches are cached per (source, target, mesh, cost model): a model's layers repeat them.
"""
from __future__ import annotations

import functools
import heapq
import itertools
from dataclasses import dataclass

from meshir.dialect.diagnostics import MeshIRError, VerifyError
from meshir.dialect.ops import OP_CLASSES
from meshir.dialect.tensor_type import TensorType, TypeContentError

from ..cost_model import BYTES, Cost, CostModel, group_size


@dataclass(frozen=True)
class Step:
    """One collective: its op name, attributes (Python values), operand and result types."""

    kind: str
    attributes: dict
    source: TensorType
    result: TensorType
    bytes_per_device: int


def plan_reshard(source: TensorType, target: TensorType, mesh_shape: dict[str, int],
                 model: CostModel = BYTES) -> list[Step]:
    """The cheapest steps from `source` to `target` (same names, sizes and element type)."""
    mesh = tuple(mesh_shape.items())
    return list(_plan(_normal(source), _normal(target), mesh, model))


def plan_cost(steps: list[Step], mesh_shape: dict[str, int], model: CostModel = BYTES) -> Cost:
    """The total cost of `steps` under `model`."""
    total = Cost()
    for step in steps:
        total = total + model.collective(step.kind, step.source, _step_axes(step), mesh_shape)
    return total


def _normal(t: TensorType) -> TensorType:
    """`t` with free dims (no layout) as replicated ones: a reshard moves concrete layouts."""
    if all(d.axes is not None for d in t.dims):
        return t
    return t.with_layout({d.name: () for d in t.dims if d.axes is None})


@functools.lru_cache(maxsize=4096)
def _plan(source: TensorType, target: TensorType, mesh: tuple, model: CostModel) -> tuple[Step, ...]:
    mesh_shape = dict(mesh)
    if source == target:
        return ()
    if [a for a in target.partial if a not in source.partial] or (
            source.partial and target.partial and source.partial_reduction != target.partial_reduction):
        raise MeshIRError(f"cannot create pending reductions: {source} -> {target}")
    # Dijkstra: entries (key, order, state, steps); `order` breaks ties by insertion, which
    # follows the fixed edge order, so the first cheapest plan found is always the same.
    counter = itertools.count()
    start = _state(source)
    bound = model.key(_gather_then_slice_cost(source, target, mesh_shape, model))
    best = {start: (model.key(Cost()), ())}
    frontier = [(model.key(Cost()), next(counter), source, Cost(), ())]
    done = set()
    while frontier:
        key, _, current, cost, steps = heapq.heappop(frontier)
        state = _state(current)
        if state in done:
            continue
        done.add(state)
        if state == _state(target):
            return steps
        for kind, attrs in _edges(current, target, mesh_shape):
            try:
                result = OP_CLASSES["mtf." + kind].result_of(current, attrs)
                result.local_shape(mesh_shape)  # each split divides its dim
            except (VerifyError, TypeContentError):
                continue
            step_cost = model.collective(kind, current, _axes_of(kind, attrs, current, result), mesh_shape)
            total = cost + step_cost
            new_key, new_state = model.key(total), _state(result)
            if new_key > bound or new_state in done or (new_state in best and best[new_state][0] <= new_key):
                continue
            step = Step(kind, {k: v for k, v in attrs.items() if k != "layout"}, current, result,
                        step_cost.bytes_per_device)
            best[new_state] = (new_key, steps)
            heapq.heappush(frontier, (new_key, next(counter), result, total, steps + (step,)))
    raise MeshIRError(f"cannot plan a reshard from {source} to {target}")


def _gather_then_slice_cost(source: TensorType, target: TensorType, mesh_shape, model: CostModel) -> Cost:
    """The cost of one plan that always works (complete the pending axes the target does not
    keep, gather every dim, slice to the target): no optimal plan costs more, so the search
    never looks past it."""
    current, total = source, Cost()
    removable = tuple(a for a in source.partial if a not in target.partial)
    if removable:
        total = total + model.collective("all_reduce", current, removable, mesh_shape)
        current = current.with_partial(tuple(a for a in current.partial if a not in removable))
    for d in current.names:
        axes = _axes(current, d)
        if axes:
            total = total + model.collective("all_gather", current, axes, mesh_shape)
            current = current.with_layout({d: ()})
    return total + Cost(0, sum(1 for d in target.names if _axes(target, d)))


def _state(t: TensorType):
    return tuple(d.axes or () for d in t.dims), t.partial


def _axes(t: TensorType, dim: str) -> tuple[str, ...]:
    return t.dim(dim).axes or ()


def _axes_of(kind: str, attrs: dict, source: TensorType, result: TensorType) -> tuple[str, ...]:
    if "axes" in attrs:
        return tuple(attrs["axes"])
    # a permute: the axes of the dims it changes
    return tuple(a for d in source.names if _axes(source, d) != _axes(result, d) for a in _axes(source, d))


def _step_axes(step: Step) -> tuple[str, ...]:
    return _axes_of(step.kind, step.attributes, step.source, step.result)


def _orderings(axes, max_len: int | None = None):
    """Every non-empty ordered selection of distinct `axes` (shortest first)."""
    top = len(axes) if max_len is None else min(max_len, len(axes))
    for k in range(1, top + 1):
        yield from itertools.permutations(axes, k)


def _edges(current: TensorType, target: TensorType, mesh_shape: dict[str, int]):
    """(kind, attributes) of every collective the search tries from `current`."""
    names = current.names
    used = set(current.used_axes_list())
    free = [a for a in mesh_shape if a not in used]
    removable = [a for a in current.partial if a not in target.partial]
    reduction = current.partial_reduction
    for k in range(1, len(removable) + 1):
        for axes in itertools.combinations(removable, k):
            yield "all_reduce", {"reduction": reduction, "axes": axes}
    for axes in _orderings(removable):
        for d in names:
            yield "reduce_scatter", {"reduction": reduction, "dim": d, "axes": axes}
    for d in names:
        have = _axes(current, d)
        for k in range(1, len(have) + 1):
            yield "all_gather", {"dim": d, "axes": have[len(have) - k:]}
    for axes in _orderings(free):
        for d in names:
            yield "all_slice", {"dim": d, "axes": axes}
    for s in names:
        have = _axes(current, s)
        for k in range(1, len(have) + 1):
            for t in names:
                if t != s:
                    yield "all_to_all", {"src_dim": s, "dst_dim": t, "axes": have[len(have) - k:]}
    for layout in _same_shard_layouts(current, mesh_shape):
        yield "collective_permute", {"layout": layout}


def _same_shard_layouts(current: TensorType, mesh_shape: dict[str, int]):
    """Every other layout of `current`'s dims with the same split factor on each dim, from the
    axes its dims use (a permute re-maps shards; it cannot split or gather)."""
    names = current.names
    pool = [a for d in names for a in _axes(current, d)]
    if not pool:
        return
    factors = [group_size(_axes(current, d), mesh_shape) for d in names]
    original = tuple(_axes(current, d) for d in names)

    def assign(i: int, left: tuple[str, ...]):
        if i == len(names):
            if not left:
                yield ()
            return
        options = [()] if factors[i] == 1 else []
        options += [p for p in _orderings(left) if group_size(p, mesh_shape) == factors[i]]
        for choice in options:
            rest = tuple(a for a in left if a not in choice)
            for tail in assign(i + 1, rest):
                yield (choice,) + tail

    for layout in assign(0, tuple(pool)):
        if layout != original:
            yield dict(zip(names, layout))
