"""Plan the collectives that turn one layout into another: the cheapest sequence first.

A step changes the source type one collective at a time, so every intermediate type is
legal (one axis per tensor) and verifies. Order of preference:

1. pending reductions that the target splits onto a dim: `reduce_scatter` (each device
   receives only its block); the remaining pending axes: one `all_reduce`;
2. a dim whose axes become other axes of equal size, unused elsewhere: `collective_permute`;
3. an axis leaving one dim for another: `all_to_all`;
4. an axis to add while it is free: `all_slice` (sends nothing, and shrinks every later step);
5. an axis that must go: `all_gather` (minor-most first).
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.ops import OP_CLASSES
from meshir.dialect.tensor_type import TensorType

from .costs import collective_bytes, group_size


@dataclass(frozen=True)
class Step:
    """One collective: its op name, attributes (Python values), operand and result types."""

    kind: str
    attributes: dict
    source: TensorType
    result: TensorType
    bytes_per_device: int


def _axes(t: TensorType, dim: str) -> tuple[str, ...]:
    return t.dim(dim).axes or ()


def _is_prefix(a: tuple, b: tuple) -> bool:
    return b[: len(a)] == a


def plan_reshard(source: TensorType, target: TensorType, mesh_shape: dict[str, int]) -> list[Step]:
    """Steps from `source` to `target` (same names, sizes and element type)."""
    steps: list[Step] = []
    current = source

    def emit(kind, attrs, layout=None):
        """Append collective `kind`; its result type is the collective's own `result_of`
        (a permute's target layout is chosen here, so it is passed as `layout`)."""
        nonlocal current
        result = OP_CLASSES["mtf." + kind].result_of(current, {**attrs, "layout": layout or {}})
        axes = attrs.get("axes", ())
        cost = collective_bytes(kind, current, axes if axes else _changed_axes(current, result), mesh_shape)
        steps.append(Step(kind, attrs, current, result, cost))
        current = result

    _plan_partial(current, target, emit, lambda: current)
    for _ in range(4 * (len(mesh_shape) + 1) * max(len(source.dims), 1)):
        if current.layout == target.layout:
            return steps
        step = (_permute_step(current, target, mesh_shape) or _all_to_all_step(current, target)
                or _slice_step(current, target) or _gather_step(current, target))
        if step is None:
            break
        emit(*step)
    raise MeshIRError(f"cannot plan a reshard from {source} to {target}")


def _changed_axes(a: TensorType, b: TensorType) -> tuple[str, ...]:
    return tuple(x for d in a.names for x in (_axes(a, d) if _axes(a, d) != _axes(b, d) else ()))


def _plan_partial(current, target, emit, now) -> None:
    if current.partial == target.partial:
        return
    left = [a for a in current.partial if a not in target.partial]
    if [a for a in target.partial if a not in current.partial]:
        raise MeshIRError(f"cannot create pending reductions: {current} -> {target}")
    reduction = current.partial_reduction
    for axis in list(left):
        t = now()
        for d in t.names:
            want, have = _axes(target, d), _axes(t, d)
            used = set(t.used_axes_list()) - {axis}
            if _is_prefix(have + (axis,), want) and axis not in used:
                emit("reduce_scatter", {"reduction": reduction, "dim": d, "axes": (axis,)})
                left.remove(axis)
                break
    if left:
        emit("all_reduce", {"reduction": reduction, "axes": tuple(left)})


def _permute_step(current, target, mesh_shape):
    for d in current.names:
        have, want = _axes(current, d), _axes(target, d)
        others = {a for n in current.names if n != d for a in _axes(current, n)} | set(current.partial)
        if (have and want and have != want and len(have) == len(want)
                and group_size(have, mesh_shape) == group_size(want, mesh_shape) and not set(want) & others):
            return "collective_permute", {}, {d: want}
    return None


def _all_to_all_step(current, target):
    for s in current.names:
        have = _axes(current, s)
        if not have or _is_prefix(have, _axes(target, s)):
            continue
        axis = have[-1]
        for t in current.names:
            if t != s and _is_prefix(_axes(current, t) + (axis,), _axes(target, t)):
                return "all_to_all", {"src_dim": s, "dst_dim": t, "axes": (axis,)}
    return None


def _gather_step(current, target):
    for d in current.names:
        have = _axes(current, d)
        if have and not _is_prefix(have, _axes(target, d)):
            return "all_gather", {"dim": d, "axes": (have[-1],)}
    return None


def _slice_step(current, target):
    used = set(current.used_axes_list())
    for d in current.names:
        have, want = _axes(current, d), _axes(target, d)
        if len(want) > len(have) and _is_prefix(have, want) and want[len(have)] not in used:
            return "all_slice", {"dim": d, "axes": (want[len(have)],)}
    return None
