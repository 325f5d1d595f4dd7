"""Plan the collectives that turn one layout into another: a shortest-path search.

A value's layout on the mesh (each dim's ordered mesh axes, plus the pending reduction axes)
is a state; each collective that applies to it is an edge to the state its `result_of`
gives, priced by the cost model (transforms/analysis/cost_model.py: bytes per device by default, or
α–β time when asked). Dijkstra's search from the source finds the cheapest sequence to the
target; ties go to fewer collectives, then to the first in a fixed order of edges, so plans
are deterministic. Every intermediate state is a legal type (one use per axis, each split
dividing its dim), so every emitted op verifies.

Edges from a state (the mesh's axes only, never pending axes the target keeps), each a
collective op class, tried in this order:

- `all_reduce` over any non-empty set of the pending axes the target does not keep;
- `reduce_scatter` of such axes (in any order) onto any dim where they are free;
- `all_gather` of a dim's k minor-most axes;
- `all_slice` of a free axis onto any dim, among the axes the source or the target uses (one
  axis per edge; consecutive slices of a dim are merged into one op afterwards);
- `all_to_all` of a dim's k minor-most axes onto any other dim (several axes at once);
- `collective_permute` to any other layout with the same shard shape on every dim (the same
  axes moving between dims, or a dim's axes reordered).

A mesh axis that neither side uses is never brought in: spreading a value over it can lower
ring bytes (e.g. a pending sum over x slices the idle y, reduce-scatters over x and
all-gathers over (y, x): 1.25 instead of 1.5 shards), but it trades one all_reduce for three
collectives and involves devices that hold nothing of the value (docs/reshard-planner.md).

Searches are cached per (source, target, mesh, cost model): a model's layers repeat them.
On meshes of more than four axes, or after MAX_MOVES moves, the search runs in a narrower
space (no permutes, slices only of the target's axes): its plan is then the cheapest of that
space, not proven the cheapest of all; should that one also exceed MAX_MOVES, the plan is
`_fallback_path`'s (slice what is free, gather, slice), which also bounds every search.
"""
from __future__ import annotations

import functools
import heapq
import itertools
import math
from dataclasses import dataclass

from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.ops import AllGatherOp, AllReduceOp, AllSliceOp, AllToAllOp, CollectivePermuteOp, ReduceScatterOp
from meshir.dialect.tensor_type import TensorType

from ..analysis.cost_model import BYTES, Cost, CostModel, group_size


@dataclass(frozen=True)
class Step:
    """One collective: its op class, attributes (Python values), operand and result types."""

    op: type
    attributes: dict
    source: TensorType
    result: TensorType
    bytes_per_device: int

    @property
    def kind(self) -> str:
        """The collective's kind ("all_gather", ...)."""
        return self.op.kind()


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
    try:
        if len(mesh_shape) > MAX_EXACT_AXES:
            raise _TooLarge
        return _search(source, target, mesh_shape, model, _Space(source, target, mesh_shape, model, full=True))
    except _TooLarge:
        pass
    try:
        return _search(source, target, mesh_shape, model, _Space(source, target, mesh_shape, model, full=False))
    except _TooLarge:
        return _merged(_steps(source, _fallback_path(source, target), mesh_shape, model))


#: Moves the exact search tries before it gives up for the narrower space (meshes of many
#: axes: every permutation of a shard's axes is a move; about a second of Python).
MAX_MOVES = 100_000
#: Meshes of more axes get the narrower space at once (a shard's axes have too many orders).
MAX_EXACT_AXES = 4


class _TooLarge(Exception):
    pass


def _search(source, target, mesh_shape, model: CostModel, space: "_Space") -> tuple[Step, ...]:
    # Dijkstra over compact states (layout tuple, pending axes); entries (key, order, state,
    # cost, path). `order` breaks ties by insertion, which follows the fixed edge order, so
    # the first cheapest plan found is always the same one.
    counter = itertools.count()
    start, goal = _state(source), _state(target)
    # No optimal plan costs more than the always-valid one; its count of collectives is not
    # comparable (the search slices one axis per move), so the bound leaves it out.
    bound = model.key(plan_cost(list(_steps(source, _fallback_path(source, target), mesh_shape, model)),
                                mesh_shape, model))[:-1]
    best = {start: model.key(Cost())}
    frontier = [(model.key(Cost()), next(counter), start, Cost(), ())]
    done, tried = set(), 0
    while frontier:
        _, _, state, cost, path = heapq.heappop(frontier)
        if state in done:
            continue
        done.add(state)
        if state == goal:
            return _merged(_steps(source, path, mesh_shape, model))
        for op, attrs, new_state, price in space.moves(state):
            tried += 1
            if tried > MAX_MOVES:
                raise _TooLarge
            total = cost + price
            key = model.key(total)
            if key[:-1] > bound or new_state in done or best.get(new_state, (math.inf,)) <= key:
                continue
            best[new_state] = key
            heapq.heappush(frontier, (key, next(counter), new_state, total, path + ((op, attrs),)))
    raise MeshIRError(f"cannot plan a reshard from {source} to {target}")


def _steps(source: TensorType, path, mesh_shape, model: CostModel) -> tuple[Step, ...]:
    """The path's (op class, attributes) as typed steps, each result from the op's own
    `result_of` (the one statement of what a collective does: the search's compact moves must
    agree with it)."""
    steps, current = [], source
    for op, attrs in path:
        result = op.result_of(current, attrs)
        price = model.collective(op.kind(), current, _axes_of(attrs, current, result), mesh_shape)
        steps.append(Step(op, {k: v for k, v in attrs.items() if k != "layout"}, current, result,
                          price.bytes_per_device))
        current = result
    return tuple(steps)


def _merged(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """`steps` with consecutive all_slices of one dim as one (the search slices one axis at a
    time, which keeps its edges few; slicing sends nothing either way)."""
    out: list[Step] = []
    for step in steps:
        last = out[-1] if out else None
        if (last is not None and step.op is last.op is AllSliceOp
                and step.attributes["dim"] == last.attributes["dim"]):
            attrs = {"dim": last.attributes["dim"], "axes": tuple(last.attributes["axes"]) + tuple(step.attributes["axes"])}
            out[-1] = Step(AllSliceOp, attrs, last.source, step.result, 0)
        else:
            out.append(step)
    return tuple(out)


def _fallback_path(source: TensorType, target: TensorType) -> list:
    """A plan that always works, the search's bound and the last resort of a search too large
    to finish: complete the pending axes the target does not keep; slice every dim that is on
    its way to its target layout by the target's axes while they are free (so later gathers
    send less); gather each other dim down to a prefix of its target layout; slice again."""
    layout = {d: _axes(source, d) for d in source.names}
    want = {d: _axes(target, d) for d in target.names}
    path = []
    removable = tuple(a for a in source.partial if a not in target.partial)
    if removable:
        path.append((AllReduceOp, {"reduction": source.partial_reduction, "axes": removable}))

    def slice_free():
        used = {a for axes in layout.values() for a in axes} | set(target.partial)
        for d, have in layout.items():
            if want[d][:len(have)] != have:
                continue
            add = ()
            for axis in want[d][len(have):]:
                if axis in used:
                    break
                add += (axis,)
            if add:
                path.append((AllSliceOp, {"dim": d, "axes": add}))
                layout[d] = have + add

    slice_free()
    for d, have in layout.items():
        keep = 0
        while keep < len(have) and keep < len(want[d]) and have[keep] == want[d][keep]:
            keep += 1
        if keep < len(have):
            path.append((AllGatherOp, {"dim": d, "axes": have[keep:]}))
            layout[d] = have[:keep]
    slice_free()
    return path


def _state(t: TensorType):
    return tuple(d.axes or () for d in t.dims), t.partial


def _axes(t: TensorType, dim: str) -> tuple[str, ...]:
    return t.dim(dim).axes or ()


def _axes_of(attrs: dict, source: TensorType, result: TensorType) -> tuple[str, ...]:
    if "axes" in attrs:
        return tuple(attrs["axes"])
    # a permute: the axes of the dims it changes
    return tuple(a for d in source.names if _axes(source, d) != _axes(result, d) for a in _axes(source, d))


def _step_axes(step: Step) -> tuple[str, ...]:
    return _axes_of(step.attributes, step.source, step.result)


class _Space:
    """The moves of the search on compact states `(layout, pending)`: `layout` a tuple of each
    dim's axes. Each move restates its collective's layout change on tuples (fast); `_steps`
    re-derives the chosen ones with the ops' `result_of`. The narrow space (`full=False`, for
    searches too large to finish) slices only axes the target uses and has no permutes."""

    def __init__(self, source: TensorType, target: TensorType, mesh_shape, model: CostModel, full: bool):
        self.full = full
        self.target_axes = set(target.used_axes_list())
        self.involved = set(source.used_axes_list()) | self.target_axes
        self.names, self.sizes = source.names, source.shape
        self.itemsize = source.dtype.itemsize
        self.mesh, self.model = mesh_shape, model
        self.keep = set(target.partial)
        self.reduction = source.partial_reduction

    def shard(self, layout) -> int | None:
        """Bytes of one device's shard, None when a split does not divide its dim."""
        elements = 1
        for size, axes in zip(self.sizes, layout):
            split = group_size(axes, self.mesh)
            if size % split:
                return None
            elements *= size // split
        return elements * self.itemsize

    def moves(self, state):
        """(op class, attributes, next state, cost) of every collective from `state`."""
        layout, pending = state
        shard = self.shard(layout)
        for op, attrs, new_layout, new_pending in self._moves(layout, pending):
            if self.shard(new_layout) is None:
                continue
            axes = attrs.get("axes") or tuple(a for old, new in zip(layout, new_layout) if old != new for a in old)
            yield op, attrs, (new_layout, new_pending), self.model.price(op.kind(), shard, axes, self.mesh)

    def _moves(self, layout, pending):
        names, ranks = self.names, range(len(self.names))
        used = {a for axes in layout for a in axes} | set(pending)
        allowed = self.involved if self.full else self.target_axes
        free = [a for a in self.mesh if a not in used and a in allowed]
        removable = [a for a in pending if a not in self.keep]

        def put(i, axes):
            return tuple(axes if j == i else layout[j] for j in ranks)

        def left(axes):
            return tuple(a for a in pending if a not in axes)

        for k in range(1, len(removable) + 1):
            for axes in itertools.combinations(removable, k):
                yield AllReduceOp, {"reduction": self.reduction, "axes": axes}, layout, left(axes)
        for axes in _orderings(removable):
            for i in ranks:
                yield (ReduceScatterOp, {"reduction": self.reduction, "dim": names[i], "axes": axes},
                       put(i, layout[i] + axes), left(axes))
        for i in ranks:
            have = layout[i]
            for k in range(1, len(have) + 1):
                yield AllGatherOp, {"dim": names[i], "axes": have[len(have) - k:]}, put(i, have[:len(have) - k]), pending
        for axis in free:  # one axis at a time: slices are free; consecutive ones merge (_merged)
            for i in ranks:
                yield AllSliceOp, {"dim": names[i], "axes": (axis,)}, put(i, layout[i] + (axis,)), pending
        for i in ranks:
            have = layout[i]
            for k in range(1, len(have) + 1):
                moved = have[len(have) - k:]
                for j in ranks:
                    if j != i:
                        new = tuple(have[:len(have) - k] if m == i else layout[j] + moved if m == j else layout[m]
                                    for m in ranks)
                        yield AllToAllOp, {"src_dim": names[i], "dst_dim": names[j], "axes": moved}, new, pending
        for new in _same_shard_layouts(layout, tuple(sorted(self.mesh.items()))) if self.full else ():
            yield CollectivePermuteOp, {"layout": dict(zip(names, new))}, new, pending


def _orderings(axes):
    """Every non-empty ordered selection of distinct `axes` (shortest first)."""
    for k in range(1, len(axes) + 1):
        yield from itertools.permutations(axes, k)


@functools.lru_cache(maxsize=65536)
def _same_shard_layouts(layout: tuple, mesh: tuple) -> tuple:
    """Every other layout with the same split factor on each dim, from the axes the dims use
    (a permute re-maps shards; it cannot split or gather)."""
    mesh_shape = dict(mesh)
    pool = tuple(a for axes in layout for a in axes)
    if not pool:
        return ()
    factors = [group_size(axes, mesh_shape) for axes in layout]

    def assign(i: int, left: tuple[str, ...]):
        if i == len(layout):
            if not left:
                yield ()
            return
        options = [()] if factors[i] == 1 else []
        options += [p for p in _orderings(left) if group_size(p, mesh_shape) == factors[i]]
        for choice in options:
            rest = tuple(a for a in left if a not in choice)
            for tail in assign(i + 1, rest):
                yield (choice,) + tail

    return tuple(new for new in assign(0, pool) if new != layout)
