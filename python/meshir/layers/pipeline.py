"""Pipeline stages as GPipe ran them, in SPMD form (the GSPMD paper's): the parameters of
every stage stacked on a `stage` dim split over a mesh axis, one state slot per stage, and
each tick a shift of the slots along `stage` (a collective permute).

    params   [stage, layers, ...]     each stage's `layers` (pipeline_params, stage_params)
    x        [batch, ...]             the stack's input
    returns  [stage, batch, ...]      the stack's output in the last stage's slot

The batch is cut into `microbatches`: microbatch m holds the rows b with b % M == m, so a
batch split over a data axis stays split the same way in every microbatch. Tick t feeds
microbatch t to stage 0, every stage runs its layers on its slot (one mi.scan over
`layers`), and the slots shift one stage on; after M + P - 1 ticks every microbatch has left
the last stage. That is GPipe's schedule: all forwards, then, by autodiff, all backwards in
reverse; the bubble is the P - 1 ticks at either end in which some stages work on zeros.

The ticks are unrolled, as GPipe's graph was: the program grows with the microbatches, not
with the depth (each stage's layers are one loop). Autodiff then keeps what each stage's
loop saves for its backward pass, for every tick; `remat=True` keeps only each tick's input
slots and recomputes the stage in the backward pass (GPipe's re-materialization: one more
forward pass of the stack, for activation memory of one slot per tick).

The output keeps the stage dim, with the stack's result in the last stage's slot (the
other slots hold the bubble's work): read it with `last_stage`, on what the model computes
from it. Reduced to a scalar (a loss) first, only that scalar crosses the stages; on the
activations themselves it is an all-reduce of them over the stage axis.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from meshir.api.ops.collectives import shard
from meshir.api.ops.contraction import mapped_dims, reduce_sum
from meshir.api.ops.creation import constant, iota
from meshir.api.ops.elementwise import equal, mul, select
from meshir.api.ops.shape import concat, reshape, shift, slice as slice_dim, transpose
from meshir.api.programs.dims import Dim
from meshir.api.programs.program import active_program
from meshir.api.training.remat import remat as rematerialized

from . import _checks as checks
from .stack import stack_params, stacked

__all__ = ["last_stage", "pipeline", "pipeline_params", "stage_params"]

#: The name of the microbatches' dim (the batch cut into M).
MICROBATCHES = "microbatches"


def pipeline_params(layer_params: Mapping[str, list[Dim]], stages: Dim, layers: Dim) -> dict[str, list[Dim]]:
    """Each parameter of one layer with the leading [stage, layers] dims: `layers` is the
    layers of one stage (the model's depth / stages)."""
    return {name: [stages, layers, *dims] for name, dims in layer_params.items()}


def stage_params(per_layer: list[Mapping[str, np.ndarray]], stages: int) -> dict[str, np.ndarray]:
    """Per-layer parameter values (one mapping per layer, in order) as pipeline parameters
    [stages, layers / stages, ...]: stage s holds layers s * (layers / stages) onwards."""
    name = "meshir.layers.stage_params"
    if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
        raise checks.error(f"{name}: stages must be a positive int, got {stages!r}")
    if not per_layer or len(per_layer) % stages:
        raise checks.error(f"{name}: {stages} stages do not divide the {len(per_layer)} layers")
    return {n: v.reshape(stages, len(per_layer) // stages, *v.shape[1:]) for n, v in stack_params(per_layer).items()}


def _check_params(params, stage, layers, name) -> tuple[int, int]:
    if not isinstance(params, Mapping) or not params:
        raise checks.error(f"{name}: the stage parameters must be a non-empty mapping of name to Tensor, got "
                           f"{params!r}", checks.MeshIRTypeError)
    sizes = {}
    for n, v in params.items():
        checks.tensor(v, name, f"parameter '{n}'")
        checks.has_dims(v, [stage, layers], name, f"parameter '{n}'")
        sizes[n] = (checks.size(v, stage), checks.size(v, layers))
    if len(set(sizes.values())) > 1:
        raise checks.error(f"{name}: the stage parameters' ({stage}, {layers}) sizes differ: "
                           + ", ".join(f"{n} {s}" for n, s in sizes.items()))
    return next(iter(sizes.values()))


def _check_axis(axis, stages, stage, name) -> None:
    program = active_program()
    mesh = getattr(program, "mesh", None)
    if mesh is None:
        return
    if axis not in mesh.shape:
        raise checks.error(f"{name}: axis '{axis}' is not an axis of the mesh {mesh}")
    if mesh.shape[axis] != stages:
        raise checks.error(f"{name}: {stages} stages (the size of '{stage}') differ from the {mesh.shape[axis]} "
                           f"devices of mesh axis '{axis}': each device runs one stage")


def pipeline(layer, x, params, *, microbatches: int, stage: str = "stage", layers: str = "layers",
             batch: str = "batch", axis: str | None = None, remat: bool = False):
    """x [batch, ...] through every stage's layers, `layer(h, p)` per layer (as
    meshir.layers.stacked: p the slices of `params` at one layer, each with the `stage`
    dim, which the layer carries like a batch dim), GPipe's schedule over `microbatches`.
    Returns [stage, batch, ...] (see the module and last_stage). `axis`: the mesh axis the
    stages run on; the slots are pinned to it and the stage count checked against it (the
    layout rules should split `stage` over it too, so the parameters are stored per stage).
    `remat`: each stage's layers recomputed in the backward pass."""
    name = "meshir.layers.pipeline"
    checks.tensor(x, name, "the input")
    checks.has_dims(x, [batch], name, "the input")
    for taken in (stage, MICROBATCHES):
        if taken in x.names:
            raise checks.error(f"{name}: the input {x.type} already has a dim '{taken}'")
    stages, _ = _check_params(params, stage, layers, name)
    if isinstance(microbatches, bool) or not isinstance(microbatches, int) or microbatches < 1:
        raise checks.error(f"{name}: microbatches must be a positive int, got {microbatches!r}")
    total = checks.size(x, batch)
    if total % microbatches:
        raise checks.error(f"{name}: {microbatches} microbatches do not divide the batch of {total} ('{batch}' of "
                           f"{x.type})")
    if axis is not None:
        _check_axis(axis, stages, stage, name)
    M, P = microbatches, stages
    rest = [Dim(n, s) for n, s in zip(x.names, x.shape) if n != batch]
    rows = Dim(batch, total // M)
    ordered = [Dim(batch, total), *rest]
    h = x if x.names == [d.name for d in ordered] else transpose(x, ordered)
    # Microbatch m: the rows b with b % M == m (a split of `batch` stays the same split).
    h = reshape(h, [rows, Dim(MICROBATCHES, M), *rest])
    s = Dim(stage, P)
    first = equal(iota([s], stage), 0)

    def run_stage(slots, p):
        with mapped_dims(stage):  # a layer's implicit einsums keep `stage`, whenever it is traced (remat)
            return stacked(layer, slots, p, dim=layers)

    run = rematerialized(run_stage) if remat else run_stage
    slots = constant(0.0, [s, rows, *rest], dtype=x.dtype)
    done = []
    for t in range(M + P - 1):
        moved = shift(slots, stage, 1) if t else slots  # stage s takes stage s - 1's slot; stage 0 zeros
        if t < M:  # stage 0 takes microbatch t
            entering = reshape(slice_dim(h, MICROBATCHES, t, 1), [rows, *rest])
            moved = select(first, entering, moved)
        if axis is not None:
            moved = shard(moved, {stage: axis})
        slots = run(moved, dict(params))
        if t >= P - 1:  # microbatch t - (P - 1) leaves the last stage
            done.append(reshape(slots, [s, rows, Dim(MICROBATCHES, 1), *rest]))
    out = concat(done, MICROBATCHES) if len(done) > 1 else done[0]
    return reshape(out, [s, Dim(batch, total), *rest])


def last_stage(t, stage: str = "stage"):
    """The last stage's slot of `t` [stage, ...]: a sum over `stage` of t masked to its last
    index. On a 0-d-per-stage value (a loss) only that value crosses the stage axis."""
    name = "meshir.layers.last_stage"
    checks.tensor(t, name, "the value")
    checks.has_dims(t, [stage], name, "the value")
    s = Dim(stage, checks.size(t, stage))
    mask = select(equal(iota([s], stage), s.size - 1), constant(1.0, [s], dtype=t.dtype), 0.0)
    return reduce_sum(mul(t, mask), over=[stage])
