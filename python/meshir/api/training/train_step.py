"""`train_step`: forward, backward and optimizer update compiled as one program.

    step = mi.train_step(loss_prog, mi.Adam(1e-3), params=["w1", "w2"])
    exe = mi.compile(step, layout={"batch": "x", "d_ff": "y"})
    state = mi.init_optimizer_state(step, params)           # zeros, laid out like the params
    out = exe(**data, **params, **state, step=1.0)          # loss, new params, new state by name

Arguments: the loss program's arguments, then the optimizer state of each parameter
(`<param>__<slot>`, e.g. `w1__m`), then `step` (f32, 1-based). Results: `loss`, then each
parameter and state slot under its argument name, so results feed the next step directly,
then the `metrics` asked for (`grad_norm`, `learning_rate`) under their names. A 0-d int32
argument of the loss that seeds its random ops stays an argument, the run's base seed, and
the loss sees `fold_in(seed, step - 1)`: new values every step (_seeds.py).
"""
from __future__ import annotations

import numpy as np

from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import WrapsProgram, entry_function, signature

from meshir.api import _checks as checks
from meshir.api.programs import precision as policies
from meshir.api.programs._locations import located_error
from meshir.api.programs.dims import Dim
from meshir.api.ops.contraction import reduce_sum
from meshir.api.ops.creation import constant
from meshir.api.ops.elementwise import cast, select, sqrt
from meshir.api.programs.tensor import Tensor
from meshir.api.training.grad import value_and_grad
from meshir.api.training._microbatch import accumulate, check_microbatches, resized
from meshir.api.training._seeds import seed_arguments, step_seed
from meshir.api.training.optimizers import check_optimizer
from meshir.api.programs.program import Program
from meshir.api.training._update_sharding import check_shard_update, finish_step, gather_at_uses, marked


class TrainStep(WrapsProgram):
    """A training-step Program plus what callers need: parameter and state names. Its
    `result_names` are `loss`, the parameters and state, then the metrics."""

    def __init__(self, program: Program, params: tuple[str, ...], state_names: dict[str, tuple[str, ...]]):
        self.program, self.params, self.state_names = program, params, state_names

    @property
    def mesh(self):
        """The step's mesh: the loss program's, with its devices."""
        return self.program.mesh

    def state_shapes(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        """Name -> (global shape, dtype) of every optimizer state argument."""
        sig = signature(entry_function(self.module))
        wanted = {n for names in self.state_names.values() for n in names}
        return {n: (t.shape, t.dtype) for n, t in zip(sig.arg_names, sig.arg_types) if n in wanted}


@reports_at_call_site
def train_step(loss_program, optimizer, params=None, name: str = "train_step", microbatches=None,
               shard_update=False, shard_params: bool = False, precision=None, clip_norm=None,
               metrics=()) -> TrainStep:
    """The training step of `loss_program` (scalar first result) with `optimizer` on `params`
    (argument names; default: every float argument). Its passes (mtf-autodiff for the
    gradient, mtf-inline for the step's call of it) run through the pass manager.
    `microbatches={"batch": k}`: losses and gradients are summed over k slices of that dim in
    a scan (microbatch.py), one update for the full batch with a k times smaller slice live.
    `shard_update`: True (the data-parallel axes) or mesh axis names: each gradient is
    reduce-scattered over those axes instead of all-reduced, optimizer state is stored split
    over them and the update computes on one slice, then the new parameters are all-gathered
    (ZeRO 1-2). `shard_params=True` also stores the parameters split; each use gathers them
    (ZeRO-3 / FSDP). The layouts are decided by the rules at compile time (shard_update.py).
    `precision`: an mi.Precision (default: the loss program's, if it was built with one):
    parameters and state stay in its master type, the forward and backward compute in its
    compute type, parameters cast before their gathers (api/programs/precision.py).
    `clip_norm`: gradients scaled by clip_norm / norm when their global norm exceeds it
    (optax.clip_by_global_norm; a NaN or inf gradient makes the norm and every parameter NaN).
    `metrics`: names among METRICS, added as results after the state. A function traced by
    `mi.jit` is given as `f.lower(*args)`: a step's names exist before any call."""
    _refuse_traced(loss_program)
    check_optimizer(optimizer)
    clip_norm = None if clip_norm is None else checks.real(clip_norm, "clip_norm of mi.train_step")
    if clip_norm is not None and clip_norm <= 0:
        raise located_error(f"clip_norm of mi.train_step must be positive, got {clip_norm}", MeshIRValueError)
    metrics = _check_metrics(metrics, optimizer)
    policy = policies.check(precision, "precision of mi.train_step")
    sharding = check_shard_update(shard_update, shard_params)
    module = checks.module_of(loss_program, "the loss program of mi.train_step")
    name = checks.identifier(name, "the name of the training step")
    fn = entry_function(module)
    sig = signature(fn)
    mesh = function_mesh(fn, module_meshes(module.operation))
    if mesh is not None:  # the step runs on the loss program's devices, if it was given some
        mesh = checks.on_users_devices(mesh, None, loss_program)
    floats = [n for n, t in zip(sig.arg_names, sig.arg_types) if t.is_float]
    params = tuple(floats if params is None else checks.sequence([params] if isinstance(params, str) else params,
                                                                 "params of mi.train_step"))
    for p in params:
        if not isinstance(p, str):
            raise located_error(f"train_step: params must be argument names, got {checks.describe(p)}",
                                MeshIRTypeError)
        if p not in sig.arg_names:
            raise located_error(f"train_step: '{p}' is not an argument of @{sig.function} ({', '.join(sig.arg_names)})",
                                MeshIRValueError)
    micro = check_microbatches(microbatches, sig, params) if microbatches is not None else None
    seeds = seed_arguments(fn)
    optimizers = optimizer.for_parameters(list(params)) if hasattr(optimizer, "for_parameters") else {}
    optimizers = {p: optimizers.get(p, optimizer) for p in params}
    policy = policy or policies.program_default(module)
    if policy is not None:
        policies.check_arguments(module, policy, params, "the loss program of mi.train_step")
    source = gather_at_uses(module, params) if shard_params else module
    if policy is not None:  # value_and_grad applies it, after the gathers are placed
        source = source if source is not module else policies.copy(module)
        policies.set_default(source, policy)
    gradient = value_and_grad(resized(source, *micro) if micro else source, wrt=list(params))
    if policy is not None and not micro:  # gradients leave in `reduce`, summed across devices in it
        policies.narrow_gradient_results(gradient.module, policy)  # (microbatches accumulate in master)
    rules = LayoutRules.from_attribute(fn)
    state_names: dict[str, tuple[str, ...]] = {}
    with Program(name, mesh, layout=rules or None) as prog:
        args = {}
        for n, t in zip(sig.arg_names, sig.arg_types):
            args[n] = prog.argument(n, [Dim(d.name, d.size) for d in t.dims], t.element_type,
                                    layout={d.name: d.axes for d in t.dims if d.axes is not None} or None)
        states = {}
        for p in params:
            dims = args[p].dims
            slots = optimizers[p].state_dims(dims)
            states[p] = {k: prog.argument(f"{p}__{k}", d, args[p].dtype) for k, d in slots.items()}
            state_names[p] = tuple(f"{p}__{k}" for k in slots)
        step = prog.argument("step", [], "f32")
        # With sharding, marked boundaries say which layout each value takes (shard_update.py):
        # gradients, the update and the state in the update layout; the new parameters back
        # in the compute layout (ZeRO 1-2) or stored split like the state (ZeRO-3).
        def mark(t, p, which):
            return marked(t, p, which) if sharding else t

        inputs, current = dict(args), {}
        for n in seeds:  # the argument is the run's base seed; the loss gets this step's
            inputs[n] = step_seed(args[n], step)
        for p in params:
            if shard_params:
                inputs[p] = current[p] = mark(args[p], p, "stored")
            else:
                current[p] = mark(args[p], p, "update")
            states[p] = {k: mark(v, p, "stored") for k, v in states[p].items()}
        outputs = accumulate(gradient, prog, inputs, *micro, seeds=seeds) if micro else prog.call(gradient, **inputs)
        prog.result(outputs[0], name="loss")
        grads = {}
        for p, g in zip(params, outputs[1:]):
            g = mark(g, p, "update")
            grads[p] = g if g.dtype == args[p].dtype else cast(g, args[p].dtype)  # summed in `reduce`
        norm = global_norm(list(grads.values())) if clip_norm is not None or "grad_norm" in metrics else None
        if clip_norm is not None:
            grads = {p: clipped(g, norm, clip_norm) for p, g in grads.items()}
        updates = {p: optimizers[p].update(current[p], grads[p], states[p], step) for p in params}
        for p in params:
            prog.result(mark(updates[p][0], p, "update" if shard_params else "compute"), name=p)
        for p in params:
            for k, v in updates[p][1].items():
                prog.result(mark(v, p, "update"), name=f"{p}__{k}")
        for metric in metrics:
            prog.result(norm if metric == "grad_norm" else _learning_rate(optimizer, step), name=metric)
    if sharding:
        finish_step(prog, sharding)
    return TrainStep(prog, params, state_names)


#: What `metrics=` may ask for: the global gradient norm (before clipping) and the learning
#: rate of this step (the optimizer's `learning_rate_at`).
METRICS = ("grad_norm", "learning_rate")


def _check_metrics(metrics, optimizer) -> tuple[str, ...]:
    names = tuple(checks.sequence([metrics] if isinstance(metrics, str) else metrics, "metrics of mi.train_step"))
    for n in names:
        if n not in METRICS:
            raise located_error(f"unknown metric {checks.describe(n)} in mi.train_step; known: {', '.join(METRICS)}",
                                MeshIRValueError)
        if names.count(n) > 1:
            raise located_error(f"metric '{n}' asked for twice in mi.train_step", MeshIRValueError)
    if "learning_rate" in names and not hasattr(optimizer, "learning_rate_at"):
        raise located_error(f"metrics 'learning_rate' needs an optimizer with learning_rate_at(t); "
                            f"{type(optimizer).__name__} has none", MeshIRTypeError)
    return names


def _learning_rate(optimizer, step):
    rate = optimizer.learning_rate_at(step)
    return rate if isinstance(rate, Tensor) else constant(float(rate), [], dtype="f32", program=step.program)


def global_norm(grads: list) -> Tensor:
    """sqrt of the sum of every gradient's squares, in f32: one scalar, whole over the mesh.

    The squared sums stay pending through the adds (mtf-insert-collectives joins sums
    pending over different axes), so one scalar all-reduce completes the norm. They are added
    within groups of gradients with the same dim names first: the layout rules give those
    the same layout, so their sums are pending alike and need no joining."""
    groups: dict[frozenset, list] = {}
    for g in grads:
        groups.setdefault(frozenset(g.names), []).append(g)
    total = None
    for members in groups.values():
        group = None
        for g in members:
            g = g if g.dtype == "f32" else cast(g, "f32")
            part = reduce_sum(g * g)
            group = part if group is None else group + part
        total = group if total is None else total + group
    return sqrt(total)


def clipped(g: Tensor, norm: Tensor, clip_norm: float) -> Tensor:
    """optax.clip_by_global_norm's formula: g below the norm, else g / norm * clip_norm."""
    n = norm if norm.dtype == g.dtype else cast(norm, g.dtype)
    return select(norm < clip_norm, g, (g / n) * clip_norm)


@reports_at_call_site
def init_optimizer_state(step: TrainStep) -> dict[str, np.ndarray]:
    """Zero optimizer state for every parameter, by argument name."""
    if not isinstance(step, TrainStep):
        raise located_error(f"init_optimizer_state needs the TrainStep of mi.train_step, got {checks.describe(step)}",
                            MeshIRTypeError)
    return {n: np.zeros(shape, dtype) for n, (shape, dtype) in step.state_shapes().items()}


def _refuse_traced(loss_program) -> None:
    """A located error for an `mi.jit` function passed as the loss: it has no program until
    it meets a signature, and a TrainStep's names and state shapes are needed before."""
    if hasattr(loss_program, "traced_gradient"):  # an mi.jit function (eager/jit.py)
        raise located_error(f"mi.train_step takes a program: pass {loss_program.__name__}.lower(*args) (the traced "
                            "function lowered for the arguments it will train on), not the traced function",
                            MeshIRTypeError)
