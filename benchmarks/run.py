"""MeshIR vs jax.jit on 8 CPU devices: one command for every measurement.

    python benchmarks/run.py                  # all cases, full sizes, then compile scaling
    python benchmarks/run.py --quick          # small sizes, few repeats (results/quick/)
    python benchmarks/run.py --cases mlp,transformer/2d --skip-scaling

Each case (a program under a layout) runs three ways in one process: (a) MeshIR explicit,
(b) MeshIR gspmd ("n/a" while `mode="gspmd"` raises MeshIRError), (c) plain JAX under
jax.jit with the same shardings. Writes benchmarks.md and benchmarks.json (plus the compile
scaling's md, json and png) under the output folder.
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import harness  # noqa: E402
import measure  # noqa: E402
from cases import LAYOUTS, MESH_AXES, SIZES, select_cases  # noqa: E402

#: A step-time ratio (explicit / jax.jit, medians) up to this counts as on par.
STEP_TIME_TARGET = 1.10
#: Pass time at the largest mesh over the smallest up to this counts as flat.
FLAT_TARGET = 1.25


def _kib(n) -> str:
    return "—" if n is None else f"{n / 1024:,.1f}"


def _collectives_cell(record) -> str:
    kinds = record["collectives"]["by_kind"]
    if not kinds:
        return "none"
    return ", ".join(f"{k} ×{v['count']}" for k, v in sorted(kinds.items()))


def _compile_cell(mode, record) -> str:
    c = record["compile_s"]
    if mode == "jax":
        return f"lower {c['lower'] * 1e3:.0f} + XLA {c['xla'] * 1e3:.0f}"
    return f"passes {c['meshir_passes'] * 1e3:.0f} + XLA {c['xla'] * 1e3:.0f}"


def targets(results: list[dict], scaling: dict | None) -> dict:
    """The three targets, per case and overall."""
    bytes_rows, time_rows = [], []
    for r in results:
        ex, jx = r["modes"].get("explicit", {}), r["modes"].get("jax", {})
        if ex.get("status") != "ok" or jx.get("status") != "ok":
            continue
        eb, jb = ex["collectives"]["bytes_per_device"], jx["collectives"]["bytes_per_device"]
        bytes_rows.append({"case": r["case"], "explicit": eb, "jax": jb, "analytic_min": r["analytic_min_bytes_per_device"],
                           "met": eb <= jb})
        ratio = ex["step_time"]["median_s"] / jx["step_time"]["median_s"]
        ratio_pjrt = ex["step_time_pjrt_only"]["median_s"] / jx["step_time"]["median_s"]
        time_rows.append({"case": r["case"], "ratio_median": ratio,
                          "ratio_min": ex["step_time"]["min_s"] / jx["step_time"]["min_s"],
                          "ratio_pjrt_only": ratio_pjrt, "met": ratio <= STEP_TIME_TARGET})
    explicit = [r["modes"]["explicit"] for r in results if "planner" in r["modes"].get("explicit", {})]
    planner = [e["planner"]["bytes_per_device"] == e["collectives"]["bytes_per_device"] for e in explicit]
    out = {
        "planner_agrees": f"{sum(planner)}/{len(planner)} cases",
        "bytes": {"rows": bytes_rows, "met": all(r["met"] for r in bytes_rows)},
        "step_time": {"rows": time_rows, "threshold": STEP_TIME_TARGET,
                      "geomean_ratio": math.exp(sum(math.log(r["ratio_median"]) for r in time_rows) / len(time_rows))
                      if time_rows else None,
                      "met": all(r["met"] for r in time_rows)},
    }
    if scaling:
        rows = scaling["by_devices"]
        ratio = rows[-1]["passes"] / rows[0]["passes"]
        out["pass_time_flat"] = {"devices": [rows[0]["devices"], rows[-1]["devices"]], "ratio": ratio,
                                 "threshold": FLAT_TARGET, "met": ratio <= FLAT_TARGET,
                                 "by_phase": {p: rows[-1][p] / rows[0][p] for p in
                                              ("propagate", "insert_collectives", "lower_explicit")}}
    return out


def markdown(meta: dict, results: list[dict], goal: dict, scaling: dict | None) -> str:
    mesh = "×".join(f"{a}={n}" for a, n in MESH_AXES.items())
    ms = harness.ms
    lines = [
        "# MeshIR vs jax.jit",
        "",
        f"{meta['date']} · jax/jaxlib {meta['jax']} · {meta['cpu_count']} CPU cores (load average "
        f"{meta['load_average_at_start']} at start, {meta['load_average_at_end']} at end), {meta['devices']} virtual CPU "
        f"devices, mesh {mesh} (row-major device order) · sizes `{meta['sizes_name']}` {meta['sizes']} · "
        f"step time over {meta['reps']} interleaved runs after {meta['warmup']} warm-up runs · "
        f"command: `{meta['command']}`",
        "",
        "Modes: **explicit** = `mi.compile(mode=\"explicit\")` (MeshIR partitions), **gspmd** = "
        "`mi.compile(mode=\"gspmd\")` (XLA's Shardy partitioner), **jax** = the same computation in plain JAX under "
        "`jax.jit` with the same `NamedSharding`s in/out and `with_sharding_constraint` inside. "
        "Layouts: " + ", ".join(f"**{k}** `{_rules_text(v)}`" for k, v in LAYOUTS.items()) + ".",
        "",
        "Bytes are per device, read from the compiled HLO (see *Method*); memory is PJRT's temp + argument + "
        "output per device; FLOPs are XLA's cost analysis per device. All three modes' results agree "
        f"(asserted, rtol {measure.RTOL:g}).",
        "",
        "| case | mode | collectives (HLO) | bytes/device (HLO) | analytic min | step median (ms) | step min (ms) "
        "| vs jax.jit | compile (ms) | memory/device (KiB) | MFLOP/device |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        jax_median = r["modes"].get("jax", {}).get("step_time", {}).get("median_s")
        for mode, rec in r["modes"].items():
            if rec["status"] != "ok":
                lines.append(f"| {r['case']} | {mode} | n/a ({rec['note']}) | | {r['analytic_min_bytes_per_device']:,} "
                             "| | | | | | |")
                continue
            st = rec["step_time"]
            ratio = f"{st['median_s'] / jax_median:.2f}×" if jax_median else ""
            mem = rec["memory_per_device"]
            flops = rec["flops_per_device"]
            lines.append(
                f"| {r['case']} | {mode} | {_collectives_cell(rec)} | {rec['collectives']['bytes_per_device']:,} | "
                f"{r['analytic_min_bytes_per_device']:,} | {ms(st['median_s'])} | {ms(st['min_s'])} | {ratio} | "
                f"{_compile_cell(mode, rec)} | {_kib(mem and mem['total'])} | "
                f"{'—' if flops is None else f'{flops / 1e6:,.1f}'} |")
    lines += ["", "## Targets", ""]
    b = goal["bytes"]
    lines.append(f"1. **Explicit moves no more bytes per device than jax.jit, on every case: "
                 f"{'met' if b['met'] else 'NOT met'}** "
                 f"({sum(r['met'] for r in b['rows'])}/{len(b['rows'])} cases; explicit = analytic minimum on "
                 f"{sum(r['explicit'] == r['analytic_min'] for r in b['rows'])}/{len(b['rows'])}).")
    for r in b["rows"]:
        if not r["met"]:
            lines.append(f"   - {r['case']}: explicit {r['explicit']:,} B > jax.jit {r['jax']:,} B")
    t = goal["step_time"]
    if t["rows"]:
        lines.append(f"2. **Step time, explicit / jax.jit (medians): geometric mean {t['geomean_ratio']:.2f}×; "
                     f"≤ {t['threshold']:.2f}× on {sum(r['met'] for r in t['rows'])}/{len(t['rows'])} cases** "
                     f"({'met' if t['met'] else 'not met everywhere'}).")
        lines.append("")
        lines.append("   | case | explicit / jax (median) | (min) | explicit PJRT-only / jax (median) |")
        lines.append("   |---|---|---|---|")
        for r in t["rows"]:
            lines.append(f"   | {r['case']} | {r['ratio_median']:.2f}× | {r['ratio_min']:.2f}× | "
                         f"{r['ratio_pjrt_only']:.2f}× |")
        lines.append("")
        lines.append("   *PJRT-only* times the compiled executable alone (`execute_sharded` on already placed "
                     "arguments): the difference to the public call is `Executable.__call__`'s Python work "
                     "(binding and checking arguments, one `jax.device_put` per argument, wrapping results).")
    f = goal.get("pass_time_flat")
    if f:
        lines.append(f"3. **MeshIR pass time flat in the number of devices: {'met' if f['met'] else 'NOT met'}** — "
                     f"{f['devices'][1]} vs {f['devices'][0]} devices: {f['ratio']:.2f}× (threshold "
                     f"{f['threshold']:.2f}×; propagate {f['by_phase']['propagate']:.2f}×, insert collectives "
                     f"{f['by_phase']['insert_collectives']:.2f}×, lower {f['by_phase']['lower_explicit']:.2f}×). "
                     "Details: [compile_scaling.md](compile_scaling.md).")
    else:
        lines.append("3. MeshIR pass time vs devices: not measured in this run (`--skip-scaling`).")
    diffs = []
    for r in results:
        ex, jx = r["modes"].get("explicit", {}), r["modes"].get("jax", {})
        if ex.get("memory_per_device") and jx.get("memory_per_device"):
            parts = [f"{k} {(ex['memory_per_device'][k] - jx['memory_per_device'][k]) / 1024:+,.0f} KiB"
                     for k in ("argument", "output", "temp") if ex["memory_per_device"][k] != jx["memory_per_device"][k]]
            if parts:
                same = r["modes"].get("gspmd", {}).get("memory_per_device") == ex["memory_per_device"]
                diffs.append(f"{r['case']} ({', '.join(parts)}{'; gspmd mode alike' if same else ''})")
    lines += ["", "Memory per device, explicit vs jax.jit: " + (
        "identical on every case." if not diffs else "identical except " + "; ".join(diffs) + ".")]
    lines += ["", "## Analytic minimum per case", "",
              "The least traffic any partitioner needs for the layout (forward pass — the `_fwdbwd` cases add "
              "the backward pass and the gradient all-reduces — arguments already placed, "
              "results in the layout the rules give):", ""]
    for r in results:
        lines.append(f"- **{r['case']}**: {r['analytic_min_bytes_per_device']:,} B — {r['analytic_min_derivation']}")
    lines += ["", "## Method", "",
              "- **Bytes from the compiled HLO**: `exe.compiled_hlo_text()` (MeshIR) and `compiled.as_text()` "
              "(jax.jit) are parsed for `all-reduce`, `all-gather`, `reduce-scatter`, `all-to-all` and "
              "`collective-permute` instructions (and async `-start` forms). Each gives its operands' shapes "
              "(looked up by name in its computation) and its group size from `replica_groups` in any of XLA's "
              "printed forms (explicit `{{0,1},...}`, iota `[4,2]<=[8]`, mesh-axes `mesh['x'=4,'y'=2] {'y'}`). "
              "Bytes per device use the ring formulas of MeshIR's planner (transforms/analysis/cost_model.py): "
              "all-reduce 2(n-1)/n·B, all-gather (n-1)·B, reduce-scatter and all-to-all (n-1)/n·B, "
              "collective-permute B, with B one device's operand bytes. For explicit mode the planner's own "
              f"figure (`exe.report()`, JSON `planner`) equals the HLO's on {goal['planner_agrees']}.",
              "- **Step time**: arguments are placed once with each executable's input shardings; the timed call "
              "is the public one (`exe(**arrays)`, `compiled(*arrays)`) followed by `block_until_ready`; the "
              "modes are interleaved run by run.",
              "- **Compile time**: MeshIR = `exe.compile_times` (passes incl. lowering, then PJRT/XLA); jax.jit = "
              "`jit(f).lower(...)` then `.compile()`.",
              "- **Memory / FLOPs**: `memory_analysis()` (temp + argument + output bytes) and `cost_analysis()['flops']` "
              "of each compiled executable, per device.",
              ""]
    if scaling:
        lines += ["## Compile scaling (summary)", "", "See [compile_scaling.md](compile_scaling.md) and "
                  "compile_scaling.png (written beside it, not committed).", ""]
    return "\n".join(lines)


def _rules_text(rules: dict) -> str:
    return ", ".join(f"{k}:{v if isinstance(v, str) else '(' + ','.join(v) + ')'}" for k, v in rules.items())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, 5 timed runs, quick compile scaling")
    parser.add_argument("--cases", default="all", help="comma-separated: 'mlp', 'attention/mp', '*/2d' (default: all)")
    parser.add_argument("--reps", type=int, default=None, help="timed runs per mode (default 50, quick 5)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--skip-scaling", action="store_true", help="do not run compile_scaling.py")
    parser.add_argument("--out", default=None, help="output folder (default results/, quick: results/quick/)")
    args = parser.parse_args(argv)
    sizes_name = "quick" if args.quick else "full"
    reps = args.reps or (5 if args.quick else 50)
    out = harness.results_dir(args.out, args.quick)
    cases = select_cases(args.cases)
    harness.ensure_devices(8)

    import jax

    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "jax": jax.__version__,
            "cpu_count": os.cpu_count(), "devices": len(jax.devices()), "python": platform.python_version(),
            "load_average_at_start": round(os.getloadavg()[0], 2), "sizes_name": sizes_name, "sizes": SIZES[sizes_name], "reps": reps, "warmup": args.warmup,
            "command": "python benchmarks/run.py" + ("" if argv is None and len(sys.argv) == 1 else
                                                    " " + " ".join(sys.argv[1:] if argv is None else argv))}
    results = []
    started = time.perf_counter()
    for case in harness.progress(cases, "cases", unit="case"):
        t0 = time.perf_counter()
        r = measure.run_case(case, SIZES[sizes_name], reps=reps, warmup=args.warmup)
        results.append(r)
        summary = "  ".join(
            f"{m}: {rec['collectives']['bytes_per_device']:>10,} B {rec['step_time']['median_s'] * 1e3:7.2f} ms"
            if rec["status"] == "ok" else f"{m}: n/a" for m, rec in r["modes"].items())
        harness.write(f"{case.name:16s} {summary}   ({time.perf_counter() - t0:.1f} s)")
    scaling = None
    if not args.skip_scaling:
        import compile_scaling

        print("compile scaling (MeshIR passes, no XLA):", flush=True)
        scaling = compile_scaling.run(quick=args.quick)
        compile_scaling.write(scaling, out)
    goal = targets(results, scaling)
    meta["total_s"] = time.perf_counter() - started
    meta["load_average_at_end"] = round(os.getloadavg()[0], 2)
    harness.write_report(out, "benchmarks", {"meta": meta, "targets": goal, "cases": results},
                         markdown(meta, results, goal, scaling))
    print(f"{meta['total_s']:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
