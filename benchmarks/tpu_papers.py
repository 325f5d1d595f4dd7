"""The papers' training steps compiled by XLA:TPU for TPU v3 pods, MeshIR beside jax.jit.

    python benchmarks/tpu_compile.py --papers           # results/tpu_papers.{md,json}
    python benchmarks/tpu_compile.py --papers --quick   # reduced sizes, results/quick/

Mesh-TensorFlow's 4.9B LM on 512 TPU v3 cores (v3:16x16) and GSPMD's 1T dense Transformer on
2048 (v3:32x32): the models, layouts and rows of paper_scale.py, the whole training step
(forward, backward, Adam), compiled for the topology's devices by the TPU compiler and never
run. Each row, on each side: XLA:TPU's memory per device against the core's HBM, MeshIR's
own estimate, XLA:TPU's FLOPs per device and `optimal_seconds`, the bytes one device sends
per collective kind read from the compiled TPU HLO, and the wall time to compile (MeshIR:
building the step, its passes and XLA:TPU; jax.jit: tracing and lowering, then XLA:TPU with
its SPMD partitioner). Compile time over device counts: one mid-size LM step on v3 topologies
from 8 to 2048 cores, both sides.

Utilisation is XLA:TPU's estimate, not a measurement: the FLOPs of its cost analysis over
`optimal_seconds` (its own estimate of the program's time) and the core's peak (TPU v3: 123
TFLOP/s bf16 per chip, two cores; XLA:TPU runs these f32 matmuls at bf16 precision by default).
XLA's cost analysis counts a loop's body once, not once per iteration (jax-ml/jax#13956), in
both its FLOPs and its `optimal_seconds`: the ratio is the rate it predicts for the program's
mix of work, dominated by the layer loop's body, which is what runs layers × microbatches
times. The model's FLOPs per step (6 per matmul parameter per token plus attention's
12 · layers · heads · d_k · length per token; remat's recompute not counted) are listed beside.
"""
from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import harness  # noqa: E402
import paper_scale as ps  # noqa: E402
from harness import fmt_bytes, fmt_sent  # noqa: E402
from paper_scale import Row  # noqa: E402

from meshir.api.compilation.memory_budget import TPU_ESTIMATE_MARGIN  # noqa: E402

GIB = 2 ** 30

#: Peak matmul FLOP/s per device (one TensorCore), bf16.
PEAK_PER_DEVICE = {"TPU v3": 123e12 / 2, "TPU v2": 45e12 / 2}

#: What the papers report, for the utilisation column.
REPORTED = ("GSPMD (Xu et al., 2021) reports 50–62% of peak FLOPs on 128 to 2048 TPU v3 cores for dense "
            "Transformers up to 1T parameters. The Mesh-TensorFlow paper (Shazeer et al., 2018) gives its 5B "
            "models' quality and step counts on up to 512 cores; we found no utilisation figure in it.")

ROW_1T = Row("2d", remat=True, seq_parallel="y", shard_update=True, shard_params=True, microbatches=8)

#: (model, topology, rows): the 4.9B on the paper's 512 cores; the 1T on 2048, its rows with
#: weight-update and parameter sharding, sequence parallelism and microbatches.
PAPERS = [
    ("4.9B", "v3:16x16", (Row("2d"), Row("2d", shard_update=True), Row("2d", seq_parallel="y"),
                          Row("model-parallel"))),
    ("1T", "v3:32x32", (Row("2d", remat=True, seq_parallel="y", shard_update=True, shard_params=True,
                            microbatches=4), ROW_1T)),
]
#: The rows whose fit is the issue's target (the papers trained these models there): for the
#: 1T, the configuration that fits both sides (with 4 microbatches jax.jit fits and MeshIR
#: does not).
TARGETS = {"4.9B": Row("2d").name, "1T": ROW_1T.name}

#: Compile time over device counts: one LM step (134M parameters) with batch over x and
#: heads, d_ff and vocab over y = 8, on v3 topologies of 8 to 2048 cores.
SCALING_CONFIG = dict(layers=8, d_model=1024, heads=16, d_ff=4096, length=256, batch=256, vocab=32768)
SCALING = [("v3:2x2", 8), ("v3:4x4", 32), ("v3:8x8", 128), ("v3:16x16", 512), ("v3:32x32", 2048)]

QUICK_PAPERS = [("4.9B", "v3:2x2", (Row("2d"), Row("model-parallel"))), ("1T", "v3:2x2", (ROW_1T,))]
QUICK_SCALING = [("v3:2x2", 8), ("v3:4x4", 32)]


def model_flops(cfg) -> float:
    """Training FLOPs of one step of the model (PaLM's convention): 6 per matmul parameter per
    token (the output projection is the tied embedding) and 12 · layers · heads · d_k · length
    per token for attention's two contractions; remat's recompute is not counted."""
    matmul = cfg.layers * (4 * cfg.d_model * cfg.heads * cfg.d_k + 2 * cfg.d_model * cfg.d_ff) + cfg.vocab * cfg.d_model
    return cfg.batch * cfg.length * (6 * matmul + 12 * cfg.layers * cfg.heads * cfg.d_k * cfg.length)


def hbm_needed(rec: dict) -> int | None:
    """The bytes XLA:TPU said a refused program needs ("... temporaries (16.13G) exceeds ...")."""
    found = re.search(r"required for HLO temporaries \(([\d.]+)G\)", rec.get("error", ""))
    return int(float(found.group(1)) * GIB) if found else None


def _sized(model: ps.Model, mesh: dict, config: dict | None = None) -> ps.Model:
    return ps.Model(model.name, dict(config or model.config), mesh, model.layouts, (), model.memory_target_gib, ())


#: Each row compiles this many times on each side, the sides alternating (MeshIR first in even
#: rounds): compile times are the fastest round's, the rest is the first round's.
ROUNDS = 2


def both_sides(m: ps.Model, row: Row, cfg, topology: str) -> dict:
    """{"meshir": record, "jax": record} of `row` compiled for `topology`, ROUNDS times."""
    sides = {"meshir": ps.meshir_row, "jax": ps.jax_row}
    out: dict[str, dict] = {}
    for r in range(ROUNDS):
        for side in harness.round_order(list(sides), r):
            began = time.perf_counter()
            rec = sides[side](m, row, cfg, topology)
            rec["wall_s"] = time.perf_counter() - began
            rec.pop("largest", None)
            first = out.setdefault(side, rec)
            first.setdefault("compile_rounds_s", []).append(compile_s(rec))
            if rec["status"] != "ok":
                return {s: out.get(s) or sides[s](m, row, cfg, topology) for s in sides}  # a refusal: once
    return out


def paper_rows(quick: bool, log) -> list[dict]:
    from lm import model
    from meshir.lowering.runtime import tpu

    out = []
    for name, topology, rows in (QUICK_PAPERS if quick else PAPERS):
        m = (ps.QUICK_MODELS if quick else ps.MODELS)[name]
        if quick:
            m = _sized(m, {"x": 2, "y": 4})
        cfg = model.Config(**m.config)
        devices = tpu.topology_devices(topology)
        kind = devices[0].device_kind
        hbm = tpu.hbm_per_device(devices)
        for row in rows:
            record = {"model": name, "topology": topology, "devices": len(devices), "device_kind": kind,
                      "hbm": hbm, "row": row.name, **row.flags(), "parameters": ps.param_count(cfg),
                      "model_flops": model_flops(cfg)}
            record.update(both_sides(m, row, cfg, topology))
            out.append(record)
            log(f"  {name} {topology} {row.name}: " + "; ".join(f"{s} {_summary(record, s)}" for s in ("meshir", "jax")))
    return out


def scaling_config(quick: bool):
    """The model.Config of the compile-scaling step (--quick: the quick 4.9B stand-in's)."""
    from lm import model

    return model.Config(**(ps.QUICK_MODELS["4.9B"].config if quick else SCALING_CONFIG))


def scaling_rows(quick: bool, log) -> list[dict]:
    """The same step on more and more cores: compile wall time on each side."""
    cfg = scaling_config(quick)
    out = []
    for topology, n in (QUICK_SCALING if quick else SCALING):
        m = _sized(ps.MODELS["4.9B"], {"x": n // 8, "y": 8}, cfg.to_dict())
        record = {"topology": topology, "devices": n, "mesh": m.mesh}
        record.update(both_sides(m, Row("2d"), cfg, topology))
        out.append(record)
        log(f"  scaling {topology} ({n}): " + "; ".join(f"{s} {_summary(record, s)}" for s in ("meshir", "jax")))
    return out


def compile_s(rec: dict) -> float | None:
    """Wall seconds from the program to XLA:TPU's executable (the fastest round): MeshIR's
    build + mi.compile; jax's lower (tracing included) + compile."""
    if rec["status"] != "ok":
        return None
    rounds = [t for t in rec.get("compile_rounds_s", []) if t is not None]
    if rounds:
        return min(rounds)
    return rec["build_s"] + rec["compile_s"] if "build_s" in rec else rec["lower_s"] + rec["xla_compile_s"]


def utilisation(record: dict, side: str) -> float | None:
    """XLA:TPU's FLOPs over its `optimal_seconds` and the core's peak (both count each loop
    body once, so the ratio is the rate it predicts for the program's mix of work)."""
    rec = record[side]
    cost = rec.get("xla_cost") if rec["status"] == "ok" else None
    peak = PEAK_PER_DEVICE.get(record["device_kind"])
    if not cost or not cost.get("optimal_seconds") or peak is None:
        return None
    return cost["flops"] / (cost["optimal_seconds"] * peak)


def _summary(record: dict, side: str) -> str:
    rec = record[side]
    if rec["status"] != "ok":
        return f"{rec['status']}: {rec.get('note') or rec.get('error', '')[:300]}"
    cost = rec.get("xla_cost") or {}
    return (f"XLA:TPU {fmt_bytes(rec['xla_memory']['total'])}, {fmt_sent(rec['collectives']['bytes_per_device'])} sent, "
            f"optimal {cost.get('optimal_seconds', 0):.3f} s, compile {compile_s(rec):.1f} s")


# ------------------------------------------------------------------------------------------
# The report


def _fits(record: dict, side: str) -> str:
    rec = record[side]
    if rec["status"] == "ok":
        return "yes" if rec["xla_memory"]["total"] <= record["hbm"] else "**no**"
    return "**no**" if hbm_needed(rec) else "–"


def _memory(record: dict, side: str) -> str:
    rec = record[side]
    if rec["status"] == "ok":
        x = rec["xla_memory"]
        return (f"{fmt_bytes(x['total'])} ({fmt_bytes(x['argument'])} / {fmt_bytes(x['output'])} / "
                f"{fmt_bytes(x['temp'])} / {fmt_bytes(x['alias'])})")
    need = hbm_needed(rec)
    return f"refused: temporaries {fmt_bytes(need)}" if need else f"{rec['status']}: {rec.get('error', '')[:200]}"


def _estimate(rec: dict) -> str:
    return "–" if "estimate" not in rec else f"{fmt_bytes(ps.donated_estimate(rec))}"


def _pct(u) -> str:
    return "–" if u is None else f"{100 * u:.1f}%"


def table(records: list[dict]) -> list[str]:
    lines = ["| model, topology | row | side | XLA:TPU memory per device (argument / output / temp / alias) | fits "
             "| MeshIR estimate (donated) | FLOPs per device | collectives per device | total sent | optimal_seconds "
             "| utilisation (estimate) | compile s |",
             "|---|---|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for r in records:
        for side, label in (("meshir", "MeshIR"), ("jax", "jax.jit")):
            rec = r[side]
            head = (f"| {r['model']}, {r['topology']} ({r['devices']} × {r['device_kind']}, HBM {fmt_bytes(r['hbm'])}) "
                    f"| `{r['row']}` | {label} | {_memory(r, side)} | {_fits(r, side)} "
                    f"| {_estimate(rec) if side == 'meshir' else ''} ")
            if rec["status"] != "ok":
                lines.append(head + f"| – | – | – | – | – | {rec['wall_s']:.1f} (to the refusal) |")
                continue
            cost = rec.get("xla_cost") or {}
            lines.append(head + f"| {cost.get('flops', 0) / 1e12:.2f} T | {ps._kinds(rec)} "
                         f"| {fmt_sent(rec['collectives']['bytes_per_device'])} | {cost.get('optimal_seconds', 0):.3f} "
                         f"| {_pct(utilisation(r, side))} | {compile_s(rec):.1f} |")
    return lines


def models(records: list[dict]) -> list[str]:
    seen = {}
    for r in records:
        seen.setdefault((r["model"], r["topology"]), r)
    return [f"- {name} on {topology}: {r['parameters']:,} parameters; the model's FLOPs per step "
            f"{r['model_flops']:.3g} ({r['model_flops'] / r['devices']:.3g} per device)"
            for (name, topology), r in seen.items()]


def scaling_table(records: list[dict]) -> list[str]:
    lines = ["| topology | devices | mesh | MeshIR compile s | jax.jit compile s | MeshIR / jax.jit "
             "| MeshIR XLA:TPU memory | jax.jit XLA:TPU memory |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in records:
        a, b = compile_s(r["meshir"]), compile_s(r["jax"])
        mem = [fmt_bytes(r[s]["xla_memory"]["total"]) if r[s]["status"] == "ok" else r[s]["status"]
               for s in ("meshir", "jax")]
        lines.append(f"| {r['topology']} | {r['devices']} | " + " × ".join(f"{k}={v}" for k, v in r["mesh"].items())
                     + f" | {_s(a)} | {_s(b)} | {a / b:.2f} | {mem[0]} | {mem[1]} |" if a and b else
                     f"| {r['topology']} | {r['devices']} | | {_s(a)} | {_s(b)} | – | {mem[0]} | {mem[1]} |")
    return lines


def _s(x) -> str:
    return "–" if x is None else f"{x:.1f}"


def targets(records: list[dict], scaling: list[dict]) -> list[str]:
    lines = []
    for r in records:
        if TARGETS.get(r["model"]) != r["row"]:
            continue
        for side, label in (("meshir", "MeshIR"), ("jax", "jax.jit")):
            fits = _fits(r, side) == "yes"
            lines.append(f"- {r['model']} `{r['row']}` fits {r['topology']}'s {fmt_bytes(r['hbm'])} of HBM per core, "
                         f"{label}: **{'met' if fits else 'missed'}** ({_memory(r, side)})")
    both = [r for r in records if r["meshir"]["status"] == "ok" and r["jax"]["status"] == "ok"]
    mem_worse = [r for r in both if r["meshir"]["xla_memory"]["total"] > r["jax"]["xla_memory"]["total"]]
    sent_worse = [r for r in both if r["meshir"]["collectives"]["bytes_per_device"] > r["jax"]["collectives"]["bytes_per_device"]]
    for what, worse, key, unit in (
            ("memory per device", mem_worse, lambda rec: rec["xla_memory"]["total"], fmt_bytes),
            ("bytes sent per device", sent_worse, lambda rec: rec["collectives"]["bytes_per_device"], fmt_sent)):
        lines.append(f"- MeshIR ≤ jax.jit on {what}: **{'met' if not worse else 'missed'}** (MeshIR ≤ jax.jit on "
                     f"{len(both) - len(worse)} of the {len(both)} rows compiled on both sides"
                     + (")" if not worse else "; more on " + ", ".join(
                         f"{r['model']} `{r['row']}`: {unit(key(r['meshir']))} vs {unit(key(r['jax']))} "
                         f"(+{unit(key(r['meshir']) - key(r['jax']))})" for r in worse) + ")"))
    timed = both + [r for r in scaling if compile_s(r["meshir"]) and compile_s(r["jax"])]
    ratios = [compile_s(r["meshir"]) / compile_s(r["jax"]) for r in timed]
    if ratios:
        slow = [x for x in ratios if x > 1.1]
        lines.append(f"- compile time ≤ 1.1× jax.jit's: **{'met' if not slow else 'missed'}** (on "
                     f"{len(ratios) - len(slow)} of {len(ratios)} rows, the papers' and the scaling ones; ratios "
                     + ", ".join(f"{x:.2f}" for x in ratios) + ")")
    for side, label in (("meshir", "MeshIR"), ("jax", "jax.jit")):
        times = [(r["devices"], compile_s(r[side])) for r in scaling if compile_s(r[side])]
        if len(times) > 1:
            growth = times[-1][1] / times[0][1]
            lines.append(f"- {label}'s compile time from {times[0][0]} to {times[-1][0]} devices: "
                         f"{times[0][1]:.1f} s to {times[-1][1]:.1f} s ({growth:.2f}×; flat within 1.5×: "
                         f"**{'met' if growth <= 1.5 else 'missed'}**)")
    return lines


def refusal(quick: bool) -> dict:
    """A configuration far over the HBM (the 1T's 2-D layout with remat alone) compiled with
    mi.compile's default budget, and the same in jax.jit: how long until each is refused."""
    import meshir as mi
    from lm import model

    m = ps.QUICK_MODELS["1T"] if quick else ps.MODELS["1T"]
    topology, axes = ("v3:2x2", {"x": 2, "y": 4}) if quick else ("v3:32x32", m.mesh)
    m = _sized(m, axes)
    cfg = model.Config(**m.config)
    row = Row("2d")
    out = {"row": row.name, "topology": topology}
    began = time.perf_counter()
    try:
        step = model.train_step(cfg, mi.Mesh(dict(axes)), remat=True, stacked=True)
        mi.compile(step, layout=m.layouts["2d"], donate=True, mesh=mi.tpu_mesh(topology, axes))
        out["meshir"] = {"status": "compiled"}
    except mi.MeshIRError as e:
        out["meshir"] = {"status": "refused", "message": str(e).split(": error: ", 1)[-1][:1500]}
    out["meshir"]["wall_s"] = time.perf_counter() - began
    began = time.perf_counter()
    out["jax"] = ps.jax_row(m, row, cfg, topology)
    out["jax"]["wall_s"] = time.perf_counter() - began
    out["jax"].pop("error_full", None)
    return out


def refusal_lines(r: dict) -> list[str]:
    meshir, jax_side = r["meshir"], r["jax"]
    lines = [f"The 1T's `{r['row']}` (no sequence parallelism, no microbatches) on {r['topology']}, with "
             f"mi.compile's default budget (the HBM): MeshIR **{meshir['status']}** after {meshir['wall_s']:.1f} s; "
             f"jax.jit: {jax_side['status']}" + (f" (XLA:TPU: {jax_side.get('error', '')[:300]})"
                                                  if jax_side["status"] != "ok" else "")
             + f" after {jax_side['wall_s']:.1f} s. MeshIR's message:", ""]
    if "message" in meshir:
        lines += ["```", *meshir["message"].splitlines()[:14], "```"]
    return lines


def estimate_vs_xla(records: list[dict]) -> list[str]:
    """MeshIR's estimate (donated) against XLA:TPU's figure per row, and whether the check
    mi.compile makes before XLA:TPU by default (the estimate against the HBM) agrees with
    XLA:TPU's own verdict."""
    lines, agree, judged = [], 0, 0
    for r in records:
        rec = r["meshir"]
        if rec["status"] != "ok" or "estimate" not in rec:
            continue
        est, xla = ps.donated_estimate(rec), rec["xla_memory"]
        judged += 1
        agree += (est <= r["hbm"]) == (xla["total"] <= r["hbm"])
        lines.append(f"- {r['model']} `{r['row']}`: estimate {fmt_bytes(est)} against XLA:TPU's {fmt_bytes(xla['total'])}"
                     f" ({est / xla['total']:.2f}×); temporaries {fmt_bytes(est - xla['argument'])} against "
                     f"{fmt_bytes(xla['temp'])}")
    if judged:
        lines.append(f"- The estimate alone against the HBM would agree with XLA:TPU's verdict on {agree} of the "
                     f"{judged} rows XLA:TPU compiled; mi.compile refuses before XLA:TPU only beyond "
                     f"{TPU_ESTIMATE_MARGIN:g}× the budget (memory_budget.TPU_ESTIMATE_MARGIN), which no row that "
                     "fits reaches")
    return lines


def markdown(result: dict) -> str:
    meta = result["meta"]
    return "\n".join([
        "# The papers on the TPU compiler: 4.9B on 512 TPU v3 cores, 1T on 2048, MeshIR beside jax.jit",
        "",
        f"`python benchmarks/tpu_compile.py --papers{' --quick' if meta['quick'] else ''}`, {meta['date']}, "
        f"jax {meta['jax']}, libtpu {meta['libtpu']}, {meta['cpus']} CPUs (wall times are indicative). The whole "
        "training step (forward, backward, Adam; f32, layers stacked in one scan, parameters and optimizer state "
        "donated) compiled by XLA:TPU for the topology's devices; nothing runs. Models and layouts: "
        "benchmarks/paper_scale.py. MeshIR's estimate: `compile_report.memory` less the results in donated "
        "buffers. FLOPs and `optimal_seconds` are XLA:TPU's cost analysis, which counts each loop body once "
        "(the layer loop, the microbatch loop); utilisation is XLA:TPU's estimate, their ratio over 61.5 TFLOP/s "
        "per v3 core (bf16), not a measurement. Compile s: MeshIR's build + `mi.compile` (passes and XLA:TPU); "
        "jax.jit's lower + compile.",
        "",
        "## Targets",
        "",
        *targets(result["papers"], result["scaling"]),
        "",
        "## The rows",
        "",
        *table(result["papers"]),
        "",
        *models(result["papers"]),
        "",
        REPORTED,
        "",
        "## Compile time from 8 to 2048 cores",
        "",
        "One LM step (" + ", ".join(f"{k} {v}" for k, v in result["scaling_config"].items())
        + "; layout 2d: batch over x, heads, d_ff and vocab over y = 8) on each topology.",
        "",
        *scaling_table(result["scaling"]),
        "",
        "## MeshIR's memory estimate against XLA:TPU's",
        "",
        *estimate_vs_xla(result["papers"]),
        "",
        "## A configuration that cannot fit",
        "",
        *refusal_lines(result["refusal"]),
        "",
    ])


def main(out=None, quick: bool = False) -> int:
    from meshir.lowering.runtime import tpu

    out = harness.results_dir(out, quick)
    began = time.perf_counter()
    papers = paper_rows(quick, log=print)
    scaling = scaling_rows(quick, log=print)
    refused = refusal(quick)
    print(f"  refusal: meshir {refused['meshir']['status']} in {refused['meshir']['wall_s']:.1f} s; "
          f"jax {refused['jax']['status']} in {refused['jax']['wall_s']:.1f} s")
    result = {"meta": {**harness.machine(), "libtpu": tpu.libtpu_version(), "quick": quick,
                       "run_s": time.perf_counter() - began},
              "papers": papers, "scaling": scaling, "refusal": refused,
              "scaling_config": {k: v for k, v in scaling_config(quick).to_dict().items() if k in SCALING_CONFIG}}
    harness.write_report(out, "tpu_papers", result, markdown(result))
    print((out / "tpu_papers.md").read_text())
    return 0



if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:2]))
