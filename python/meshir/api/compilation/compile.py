"""`compile`: a MeshIR program to an executable on a mesh of devices.

    exe = mi.compile(prog, layout={"batch": "x", "d_ff": "y"})
    y = exe(x=np_x, w1=np_w1, w2=np_w2)     # jax.Arrays laid out as the program says
    print(exe.report())                      # layouts, collectives, bytes per device

The pipeline is the one `meshir-opt` runs, through the same pass manager (which verifies
the module before the first pass and after each): mtf-shard-update (the layouts of
weight-update sharding), mtf-propagate-sharding, mtf-insert-collectives, mtf-canonicalize,
mtf-lower-to-stablehlo; then PJRT compiles once.
With `mode="gspmd"` the propagated module is canonicalized and lowered to global StableHLO with sharding
constraints (no mtf-insert-collectives) and XLA's Shardy partitioner inserts the collectives.
"""
from __future__ import annotations

import time

from meshir.dialect import Mesh, MeshIRError
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.modes import EXPLICIT, MODES
from meshir.dialect.signature import entry_function, signature
from meshir.distributed.agreement import check_same_program
from meshir.lowering.runtime import Executable, default_platform, ensure_cpu_devices
from meshir.lowering.runtime.compile_only import CompileOnlyExecutable
from meshir.lowering.runtime.tpu import is_compile_only, topology_of
from meshir.lowering.runtime.from_stablehlo import executable_from_stablehlo, is_lowered
from meshir.transforms import PASSES, Pipeline
from meshir.transforms.passes.partition import partition_passes

from meshir.api import _checks as checks
from meshir.api.compilation.auto_layout import AutoLayout, auto_layout
from meshir.api.compilation import memory_budget as budgets
from meshir.api.compilation.compile_report import CompileReport
from meshir.api.compilation.source import declared_source, source_passes

#: `(program, rules, mode, cost_model, function) -> ((result, wrt, mesh) -> Executable)`: makes
#: the VJP executables jax's autodiff runs through a call (lowering/runtime/in_jax.py). A VJP
#: is a training program (`mi.grad`), a layer above this one, so meshir/_namespace.py installs
#: it (interop/vjp.py's `vjp_compiler`).
_vjp_compiler = None


def install_vjp_compiler(factory) -> None:
    global _vjp_compiler
    _vjp_compiler = factory


@reports_at_call_site
def compile(program_or_module, layout: dict | None = None, mesh: Mesh | dict | None = None,
            mode: str = EXPLICIT, function: str | None = None, donate=None, cost_model=None,
            memory_budget: int | str | None = None, strict: bool = False):
    """Propagate layouts, insert collectives (explicit mode), lower to StableHLO and compile
    with PJRT.

    `layout`: Mesh-TensorFlow layout rules added to the program's, or "auto": the rules
    `mi.auto_layout` chooses under `memory_budget` and `cost_model` (kept as `exe.auto_layout`),
    or what `mi.auto_layout(...)` returned (its rules, and its weight-update sharding on or
    off). `mesh`: the mesh to run on
    when the program declares none (it must match the program's when it does; a mi.Mesh with
    devices or a jax.sharding.Mesh also says which device runs each partition). `mode`:
    "explicit" (MeshIR partitions) or "gspmd" (XLA's partitioner). `donate`: argument names
    whose buffers the results may reuse, or True for every argument with a result of the same
    name, type and layout (a `mi.train_step`'s parameters and optimizer state); calls then
    consume those arguments (see `Executable`). `cost_model`: what the reshard planner, and
    propagation between layouts of one priority, minimise (`mi.CostModel`: bytes per device
    by default, or α–β time with per-axis `mi.AxisLink`s). Returns an Executable;
    its `partitioned_module` is the mtf module that was lowered (propagated only, in gspmd mode).
    `memory_budget`: bytes per device (an int, or text such as "16GiB", "512MiB", "1.5GB"):
    a program whose estimated memory per device (`exe.compile_report.memory`, from the
    partitioned program before XLA compiles it; results in donated buffers counted once)
    exceeds it is refused with a MeshIRError listing the largest tensors per device and their
    layouts. On a TPU topology (`mi.tpu_mesh`) it defaults to the HBM per device; XLA:TPU's own
    memory per device decides, and the estimate refuses only beyond twice the budget
    (api/compilation/memory_budget.py).
    `strict`: a layout rule's mesh axes the mesh lacks are an error; by default they are
    ignored with one mi.MeshIRWarning, as Mesh-TensorFlow ignored them (T5's `ensemble`).
    """
    mode = checks.choice(mode, MODES, "mode")
    budget = checks.memory_budget(memory_budget)
    if is_lowered(checks.module_of(program_or_module, "the program to compile").operation):
        return _compiled_stablehlo(program_or_module, layout, mesh, function)
    chosen = layout if isinstance(layout, AutoLayout) else None  # mi.auto_layout's result, settings of one's own
    if isinstance(layout, str) and layout == "auto":
        chosen = auto_layout(program_or_module, mesh=mesh, memory_budget=budget, cost_model=cost_model,
                             function=function)
    if chosen is not None:
        layout = chosen.rules
    rules = checks.layout_rules(layout, "layout rules")
    given_mesh = checks.mesh(mesh, "compile mesh")
    source, function = declared_source(program_or_module, given_mesh, function)
    run_mesh = function_mesh(entry_function(source, function), module_meshes(source.operation))
    if run_mesh is None:
        raise MeshIRError("the program has no mesh: give one with Program(..., mesh) or compile(..., mesh=...)")
    rules = checks.rules_on_mesh(rules, run_mesh, strict)
    run_mesh = checks.on_users_devices(run_mesh, given_mesh, program_or_module)
    compile_only = run_mesh.devices is not None and is_compile_only(run_mesh.devices)  # a TPU topology's
    if not compile_only:
        ensure_cpu_devices(run_mesh.size)
    timings = {}
    start = time.perf_counter()
    model = checks.cost_model(cost_model)
    narrow_dots = (run_mesh.devices[0].platform if compile_only else default_platform()) != "cpu"
    front = source_passes(drop_update_sharding=chosen is not None and chosen.shard_update is False)
    passes = front + partition_passes(source, rules, model, mode) + [
        PASSES["mtf-lower-to-stablehlo"](mode=mode, narrow_dots=narrow_dots)]  # the registry imports it when first asked
    kept = {len(front) - 1: [], len(passes) - 2: []}  # the inlined source; the input of the lowering
    done = []

    def keep(label, op) -> None:
        if len(done) in kept:
            kept[len(done)].append(op.clone())
        done.append(label)

    module = source  # the pipeline rewrites it in place
    Pipeline(passes, after_each=keep).apply(module)
    source, partitioned = kept[len(front) - 1][0], kept[len(passes) - 2][0]
    sig = signature(entry_function(partitioned, function))
    timings["meshir_passes_s"] = time.perf_counter() - start
    report = CompileReport(partitioned, mode, source, rules, model, function)
    limit, target = budgets.limit(budget, run_mesh.devices if compile_only else None)  # refused before XLA compiles
    if limit is not None:
        budgets.check_estimate(report, limit, budgets.donated_result_bytes(sig, donate, dict(run_mesh.axes)), target)
    check_same_program(checks.module_of(program_or_module, "the program to compile"),
                       lambda: f"{mode} {function} {run_mesh} [{rules}] {donate!r} {model!r} {budget}", module)
    start = time.perf_counter()
    try:
        exe = (CompileOnlyExecutable if compile_only else Executable)(module, run_mesh, sig, mode=mode,
                                                                     report=report, donate=donate)
    except MeshIRError as e:
        if compile_only and "RESOURCE_EXHAUSTED" in str(e):
            raise budgets.out_of_hbm(e, report, topology_of(run_mesh.devices)) from None
        raise
    timings["xla_compile_s"] = time.perf_counter() - start
    exe.compile_times = timings
    exe.pipeline = pipeline_text(passes)
    exe.partitioned_module = partitioned
    exe.auto_layout = chosen  # what layout="auto" chose (mi.auto_layout's result), else None
    exe.differentiate = _vjp_compiler(program_or_module, rules, mode, cost_model, function)  # for jax.grad
    report.xla_memory = xla_memory(exe.memory_analysis())
    report.xla_cost = xla_cost(exe.cost_analysis())
    if compile_only and budget is not None:
        budgets.check_compiled(report.xla_memory, budget, exe.topology)
    return exe


def _compiled_stablehlo(module, layout, mesh, function):
    """A module `mtf-lower-to-stablehlo` already lowered (`meshir-opt`'s output): only PJRT
    is left to run, with the layouts its shardings fix."""
    if layout is not None:
        raise MeshIRError("compile: the module is StableHLO already (lowered, laid out); layout rules cannot apply to it")
    return executable_from_stablehlo(module.operation, checks.mesh(mesh, "compile mesh"),
                                     checks.optional_name(function, "function"))


def xla_memory(stats) -> dict | None:
    """XLA's memory_analysis per device as a dict (argument, output, temp, alias and
    total = argument + output + temp - alias), or None when PJRT gives none."""
    if stats is None:
        return None
    out = {k: int(getattr(stats, f"{k}_size_in_bytes")) for k in ("argument", "output", "temp", "alias")}
    out["total"] = out["argument"] + out["output"] + out["temp"] - out["alias"]
    return out


def xla_cost(cost) -> dict | None:
    """XLA's cost_analysis per device as a dict with names in snake case (`flops`,
    `bytes_accessed`, `transcendentals`, XLA:TPU's `optimal_seconds`, ...; not its per-operand
    breakdowns such as `bytes accessed0{}`), or None."""
    if isinstance(cost, (list, tuple)):  # one dict per program on some jax versions
        cost = cost[0] if cost else None
    if not cost:
        return None
    return {k.replace(" ", "_"): float(v) for k, v in cost.items() if isinstance(v, (int, float)) and "{" not in k}


def pipeline_text(passes) -> str:
    """The pipeline `mi.compile` ran, as `meshir-opt --pass-pipeline` text with each pass's
    options that differ from their defaults."""
    return "builtin.module(" + ",".join(p.NAME + p.option_text() for p in passes) + ")"
