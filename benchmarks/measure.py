"""Running one case three ways and measuring each: (a) MeshIR explicit, (b) MeshIR gspmd,
(c) the same computation in plain JAX under `jax.jit` with the same shardings.

For each: collectives and bytes per device read from the compiled HLO (lowering/runtime/hlo_collectives.py), step
time (median and min over `reps` timed runs after `warmup` runs, each ending in
`block_until_ready`), compile time (MeshIR passes and XLA separately; jax.jit: lower and
compile), memory per device (temp + argument + output from PJRT's compiled memory stats)
and FLOPs per device (XLA's cost analysis). The three results must agree (rtol 1e-4).
The timing itself, and what every script shares (machine, formats, reports), is harness.py's.
"""
from __future__ import annotations

import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

import harness
from meshir.lowering.runtime import hlo_collectives as hlo_stats
import jax_baselines
from cases import MESH_AXES, Case
from jax_baselines import Shardings
from meshir.dialect.modes import MODES as MESHIR_MODES

RTOL = 1e-4
MODES = (*MESHIR_MODES, "jax")


def memory_per_device(stats) -> dict | None:
    """PJRT's CompiledMemoryStats as a dict, with `total` = temp + argument + output."""
    if stats is None:
        return None
    out = {k: int(getattr(stats, f"{k}_size_in_bytes")) for k in ("argument", "output", "temp", "alias")}
    out["total"] = out["temp"] + out["argument"] + out["output"]
    return out


def flops_per_device(cost) -> float | None:
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else None
    if not cost:
        return None
    return float(cost.get("flops", 0.0))


def hlo_collectives(hlo_text: str) -> dict:
    found = hlo_stats.parse_collectives(hlo_text)
    summary = hlo_stats.summarize(found)
    summary["instructions"] = [c.to_json() for c in found]
    return summary


def jax_mesh():
    """8 CPU devices in MeshIR's order (row-major over (x, y)), Auto axes (jax 0.10)."""
    harness.ensure_devices(int(np.prod(list(MESH_AXES.values()))))
    return jax_baselines.jax_mesh(MESH_AXES)


def run_meshir(prog, case: Case, inputs: dict, mode: str) -> tuple[dict, dict, list | None]:
    """Compile with `mi.compile(mode=...)`: (record, calls to time, output); a MeshIRError
    gives status "n/a"."""
    import jax

    import meshir as mi
    from meshir import _jax_private as jp

    start = time.perf_counter()
    try:
        exe = mi.compile(prog, layout=case.rules, mode=mode)
    except mi.MeshIRError as e:
        message = str(e).splitlines()[0]
        note = "not implemented" if "not implemented" in message else f"MeshIRError: {message}"
        return {"status": "n/a", "note": note}, {}, None
    wall = time.perf_counter() - start
    placed = {n: jax.device_put(inputs[n], s) for n, s in zip(exe.signature.arg_names, exe.in_shardings)}
    out = exe(**placed)
    record = {
        "status": "ok",
        "collectives": hlo_collectives(exe.compiled_hlo_text()),
        "compile_s": {"meshir_passes": exe.compile_times["meshir_passes_s"],
                      "xla": exe.compile_times["xla_compile_s"], "total": wall},
        "memory_per_device": memory_per_device(exe.memory_analysis()),
        "flops_per_device": flops_per_device(exe.cost_analysis()),
        "in_specs": [str(tuple(s.spec)) for s in exe.in_shardings],
        "out_specs": [str(tuple(s.spec)) for s in exe.out_shardings],
    }
    if exe.compile_report is not None and mode == "explicit":
        record["planner"] = {
            "bytes_per_device": exe.compile_report.total_bytes_per_device,
            "collectives": [f"{c.kind}{'@' + ','.join(c.axes) if c.axes else ''} {c.operand}: {c.bytes_per_device} B"
                            for c in exe.compile_report.collectives],
        }
    record["_shardings"] = exe.in_shardings
    # The public call (binds, checks and places the arguments, wraps the results), and PJRT's
    # execution alone (a private attribute: only to show the per-call Python overhead).
    args = [placed[n] for n in exe.signature.arg_names]
    calls = {mode: lambda: exe(**placed), f"{mode} (PJRT only)": lambda: jp.execute(exe._loaded, args, exe._result_handlers)}
    return record, calls, _arrays(out)


def run_jax(case: Case, inputs: dict) -> tuple[dict, dict, list]:
    """The same computation as plain JAX under jax.jit with NamedSharding in/out and
    with_sharding_constraint inside."""
    import jax
    import jax.numpy as jnp

    mesh = jax_mesh()
    sh = Shardings(mesh, case.rules)
    names = list(inputs)
    arg_dims = case.model.arg_dims(None)
    in_shardings = tuple(sh.named(*arg_dims[n]) for n in names)
    several = isinstance(case.model.result_dims[0], tuple)  # e.g. (loss dims, gradient dims, ...)
    out_sharding = (tuple(sh.named(*dims) for dims in case.model.result_dims) if several
                    else sh.named(*case.model.result_dims))

    def fn(*args):
        return case.model.jax_fn(jnp, sh.constrain, **dict(zip(names, args)))

    jitted = jax.jit(fn, in_shardings=in_shardings, out_shardings=out_sharding)
    placed = [jax.device_put(inputs[n], s) for n, s in zip(names, in_shardings)]
    start = time.perf_counter()
    lowered = jitted.lower(*placed)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    done = time.perf_counter()
    out = compiled(*placed)
    record = {
        "status": "ok",
        "collectives": hlo_collectives(compiled.as_text()),
        "compile_s": {"lower": lowered_at - start, "xla": done - lowered_at, "total": done - start},
        "memory_per_device": memory_per_device(compiled.memory_analysis()),
        "flops_per_device": flops_per_device(compiled.cost_analysis()),
        "in_specs": [str(tuple(s.spec)) for s in in_shardings],
        "out_specs": [str(tuple(s.spec)) for s in (out_sharding if several else (out_sharding,))],
        "_shardings": in_shardings,
    }
    return record, {"jax": lambda: compiled(*placed)}, _arrays(out)


def _arrays(out) -> list[np.ndarray]:
    """A program's result(s) as a list of NumPy arrays."""
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]


def check_close(got: list[np.ndarray], want: list[np.ndarray], what: str) -> float:
    """Assert agreement of every result (rtol 1e-4; atol 1e-4 of the result's largest |value|,
    for entries near 0). Returns the largest difference relative to that scale."""
    assert len(got) == len(want), f"{what}: {len(got)} results vs {len(want)}"
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        scale = float(np.max(np.abs(w))) if w.size else 1.0
        scale = scale or 1.0
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=RTOL * scale, err_msg=f"{what}, result #{i}")
        worst = max(worst, float(np.max(np.abs(g - w), initial=0.0)) / scale)
    return worst


def run_case(case: Case, sizes: dict, reps: int = 20, warmup: int = 3, modes=MODES) -> dict:
    """Measure `case` in every mode of `modes`; the numbers of all modes that ran must agree."""
    import jax

    import meshir as mi

    mesh = mi.Mesh(MESH_AXES)
    prog = case.model.build(mi, mesh, sizes)
    inputs = case.inputs(sizes)
    min_bytes, why = case.min_bytes(sizes)
    result = {"case": case.name, "model": case.model.name, "layout": case.layout, "rules": _rules_json(case.rules),
              "mesh": dict(MESH_AXES), "analytic_min_bytes_per_device": min_bytes, "analytic_min_derivation": why,
              "modes": {}}
    outputs, calls = {}, {}
    for mode in modes:
        if mode == "jax":
            record, timed, out = run_jax(case, inputs)
        else:
            record, timed, out = run_meshir(prog, case, inputs, mode)
        if out is not None:
            outputs[mode] = out
        calls.update(timed)
        result["modes"][mode] = record
    times = harness.time_calls(calls, reps, warmup)
    for key, t in times.items():
        mode, _, extra = key.partition(" ")
        result["modes"][mode]["step_time_pjrt_only" if extra else "step_time"] = t
    # Same shardings: MeshIR's argument layouts (propagated from the rules) are the JAX ones.
    shardings = {m: r.pop("_shardings") for m, r in result["modes"].items() if "_shardings" in r}
    if "jax" in shardings:
        for mode, mine in shardings.items():
            for i, (a, b) in enumerate(zip(mine, shardings["jax"])):
                rank = len(inputs[list(inputs)[i]].shape)
                if not a.is_equivalent_to(b, rank):
                    raise AssertionError(f"{case.name}: argument #{i} laid out as {a.spec} by {mode}, {b.spec} by jax")
    reference = outputs.get("jax", next(iter(outputs.values()), None))
    result["max_rel_diff_vs_jax"] = {}
    for mode, out in outputs.items():
        result["max_rel_diff_vs_jax"][mode] = check_close(out, reference, f"{case.name}: {mode} vs jax.jit")
    jax.clear_caches()
    return result


def _rules_json(rules: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in rules.items()}
