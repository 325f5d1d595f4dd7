"""Automatic layout validated against measurement (issue 17, part 4).

    python benchmarks/auto_layout.py            # results/auto_layout.{md,json}, about 6 minutes
    python benchmarks/auto_layout.py --quick    # tiny sizes, few candidates, no timing claims (results/quick/)
    python benchmarks/auto_layout.py --parts timed          # only the 8-device timings
    python benchmarks/auto_layout.py --parts paper          # only the 512-device part

**Timed (8 CPU devices, 4x2 mesh).** For the MLP training step (FFN with Adam) and the
Transformer training step (examples/lm) at two sizes each, `mi.auto_layout` with the
`cpu-virtual` cost model (transforms/analysis/device_kinds.py: the constants `mi.calibrate()` measured
with its own micro-benchmarks; nothing here is fitted on the layouts below) chooses a layout
(default `measure=3`). Then at least 12 candidate rule sets are taken from the search's space:
the top of the search's table plus a spread of the classic layouts (data-parallel over one or
both axes, model-parallel, 2-D both ways, no split), every one legal by the verifier's rules.
Each is priced two ways:

- **model**: the search's own estimate (`Estimator.estimate`: FLOPs at the device's rate + the
  α–β price of the collectives the model predicts);
- **model + partitioned collectives** (reported as *predicted*): `measure_candidate` of
  transforms/layout_search/choose.py: the program partitioned for real with the rules, its
  collectives priced by the same α–β links, the compute the model's FLOPs (what
  `Candidate.cost` is after measuring, the figures `mi.auto_layout` ranks its best by).

and measured: compiled with `mi.compile(layout=rules, donate=True)` and run as a user runs it
(benchmarks/lm_step.py): a fresh NumPy batch each step, the results fed back as the next
step's parameters and optimizer state, every result blocked on. Rounds interleave the
candidates (one burst of steps each, the order reversed every other round) against the shared
machine's load drift; a candidate's time is the median over rounds of its per-round median.
The Spearman rank correlation (ties averaged) between predicted and measured times, and the
chosen layout's measured time against the best measured, are the claims.

**Paper scale (compile only, a subprocess with 512 CPU devices, as benchmarks/paper_scale.py).**
The 4.9B Mesh-TensorFlow LM (stacked layers, remat, Adam) on 16x32: `mi.auto_layout` under a
16 GiB budget with the `tpu-v3` cost model (Mesh-TensorFlow's hardware), its choice and
Mesh-TF's hand layout (batch:x; heads, d_ff, vocab:y) both compiled: bytes per device from
XLA's compiled HLO (lowering/runtime/hlo_collectives.py) and memory from XLA's `memory_analysis`. A small model with
a huge budget (should come out data-parallel). The search time of the stacked Transformer at
depths 1, 8 and 48 on 16x32, with `measure=0` (search only) and the default `measure=3`
(partitioning the best three for real).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402

GIB = 2 ** 30
MESH = {"x": 4, "y": 2}
DEVICE = "cpu-virtual"

#: name -> (kind, fields): "mlp" fields batch/d_model/d_ff; "lm" fields are model.Config's.
CASES = {
    "mlp-256": ("mlp", {"batch": 256, "d_model": 512, "d_ff": 2048}),
    "mlp-512": ("mlp", {"batch": 512, "d_model": 1024, "d_ff": 4096}),
    "lm-readme": ("lm", {}),
    "lm-4L-d256": ("lm", {"layers": 4, "d_model": 256, "d_ff": 1024, "batch": 32, "length": 128}),
}
QUICK_CASES = {
    "mlp-tiny": ("mlp", {"batch": 32, "d_model": 16, "d_ff": 64}),
    "lm-tiny": ("lm", {"layers": 1, "d_model": 32, "heads": 4, "d_ff": 64, "batch": 8, "length": 16}),
}
CASE_TEXT = {
    "mlp-256": "MLP (FFN + Adam), batch 256, d_model 512, d_ff 2048",
    "mlp-512": "MLP (FFN + Adam), batch 512, d_model 1024, d_ff 4096",
    "lm-readme": "Transformer, README size (2 layers, d_model 64, d_ff 256, 16×64)",
    "lm-4L-d256": "Transformer, 4 layers, d_model 256, d_ff 1024, 32×128",
    "mlp-tiny": "MLP, tiny (batch 32, d_model 16, d_ff 64)",
    "lm-tiny": "Transformer, tiny (1 layer, d_model 32, 8×16)",
}

#: the model-parallel dims of each kind (the hand layouts split these)
HIDDEN = {"mlp": ("d_ff",), "lm": ("heads", "d_ff", "vocab")}


# ------------------------------------------------------------------------------------------
# The programs


def mlp_step(fields: dict, mesh):
    """The FFN training step: loss = mean((relu(x w1 + b1) w2 + b2 - x)^2), Adam on w1, b1, w2, b2."""
    import meshir as mi

    b, m, f = (mi.Dim(n, fields[k]) for n, k in (("batch", "batch"), ("d_model", "d_model"), ("d_ff", "d_ff")))
    with mi.Program("ffn", mesh) as prog:
        x = prog.argument("x", [b, m])
        w1, b1 = prog.argument("w1", [m, f]), prog.argument("b1", [f])
        w2, b2 = prog.argument("w2", [f, m]), prog.argument("b2", [m])
        y = mi.einsum(mi.relu(mi.einsum(x, w1, output=[b, f]) + b1), w2, output=[b, m]) + b2
        prog.result(mi.mean((y - x) * (y - x)), name="loss")
    step = mi.train_step(prog, mi.Adam(1e-3), params=["w1", "b1", "w2", "b2"])
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((m.size, f.size), np.float32) / np.sqrt(m.size),
              "b1": np.zeros(f.size, np.float32),
              "w2": rng.standard_normal((f.size, m.size), np.float32) / np.sqrt(f.size),
              "b2": np.zeros(m.size, np.float32)}

    def batches():
        data = np.random.default_rng(1)
        while True:
            yield {"x": data.standard_normal((b.size, m.size), np.float32)}

    return step, params, batches


def lm_step(fields: dict, mesh):
    from lm import model

    cfg = model.Config(**fields)
    cfg.check()
    step = model.train_step(cfg, mesh)

    def batches():
        rng = np.random.default_rng(0)
        while True:
            yield {"tokens": rng.integers(0, 95, (cfg.batch, cfg.length), dtype=np.int32),
                   "targets": rng.integers(0, 95, (cfg.batch, cfg.length), dtype=np.int32)}

    return step, model.init_params(cfg), batches


def build(kind: str, fields: dict, mesh):
    return (mlp_step if kind == "mlp" else lm_step)(fields, mesh)


# ------------------------------------------------------------------------------------------
# Candidates


def normal(rules: dict) -> dict:
    """Rules as the search writes them: dim -> tuple of axes, no empty entry."""
    out = {}
    for k, v in rules.items():
        axes = (v,) if isinstance(v, str) else tuple(v)
        if axes:
            out[k] = axes
    return dict(sorted(out.items()))


def text(rules: dict) -> str:
    from meshir.api.compilation.auto_layout import format_rules

    return format_rules(rules)


def legal(rules: dict, summary, mesh_shape: dict) -> bool:
    """The verifier's space: known dims, axes whose product divides the dim, a scan's dim
    whole, no axis on two dims of one tensor."""
    for name, axes in rules.items():
        if name not in summary.dims or name in summary.unsplittable:
            return False
        if summary.dims[name] % math.prod(mesh_shape[a] for a in axes):
            return False
    for t in summary.tensors:
        used = [a for n in t for a in rules.get(n, ())]
        if len(used) != len(set(used)):
            return False
    return True


def spread(kind: str) -> dict:
    """The classic layouts by name (the hand layouts a user would try)."""
    hidden = HIDDEN[kind]
    return {
        "data-parallel": {"batch": ("x", "y")},
        "2d (Mesh-TF)": {"batch": ("x",), **{h: ("y",) for h in hidden}},
        "no split": {},
        "batch:x": {"batch": ("x",)},
        "batch:y": {"batch": ("y",)},
        "2d flipped": {"batch": ("y",), **{h: ("x",) for h in hidden}},
        "model-parallel": {h: ("x", "y") for h in hidden},
        "model-parallel x": {h: ("x",) for h in hidden},
    }


def candidates(step, kind: str, model, count: int, top: int, classic: int | None = None):
    """(choice, [(label, Candidate)]): the auto_layout choice, then the chosen rules, the
    search's next best, the spread, and more of the search's table until `count`."""
    import meshir as mi
    from meshir.api.compilation.source import prepared_source
    from meshir.dialect import get_context
    from meshir.dialect.signature import entry_function
    from meshir.transforms.layout_search.choose import Candidate, measure_candidate
    from meshir.transforms.layout_search.estimate import Estimator
    from meshir.transforms.layout_search.summary import summarize

    began = time.perf_counter()
    choice = mi.auto_layout(step, cost_model=model, keep=max(3 * count, 30))
    choose_s = time.perf_counter() - began
    source, _ = prepared_source(step, None, None)
    fn = entry_function(source, None)
    with get_context():
        summary = summarize(fn)
    estimator = Estimator(summary, MESH, model)
    picked: dict[tuple, str] = {}

    def add(rules, label):
        rules = normal(rules)
        k = tuple(rules.items())
        if k not in picked and legal(rules, summary, MESH):
            picked[k] = label

    add(choice.rules, "chosen")
    search_table = [normal(c.rules) for c in choice.candidates]
    for i, rules in enumerate(search_table[:top]):
        add(rules, f"search #{i + 1}")
    for label, rules in list(spread(kind).items())[:classic]:
        add(rules, label)
    for i, rules in enumerate(search_table):
        if len(picked) >= count:
            break
        add(rules, f"search #{i + 1}")
    out = []
    with get_context():
        for k, label in picked.items():
            rules = dict(k)
            c = Candidate(rules, estimator.estimate(rules))
            measure_candidate(source, fn, c, model, MESH)
            out.append((label, c))
    return choice, choose_s, out


# ------------------------------------------------------------------------------------------
# Timing as a user runs it


def spearman(a, b) -> float:
    """Spearman's rank correlation, ties given their average rank."""
    def ranks(v):
        v = np.asarray(v, float)
        order = np.argsort(v, kind="stable")
        r = np.empty(len(v))
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            r[order[i:j + 1]] = (i + j) / 2 + 1
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def diagnostic_fit(records: list[dict]) -> dict | None:
    """A diagnostic only, used by no claim: the least-squares fit measured ≈ overhead +
    a·(predicted compute) + b·(predicted communication) over the candidates, i.e. by how much
    the measurements say the calibrated compute rate and link prices are off on this program."""
    if len(records) < 4:
        return None
    x = np.array([[1.0, r["predicted"]["compute_s"], r["predicted"]["comm_s"]] for r in records])
    y = np.array([r["measured"]["median_s"] for r in records])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    fitted = x @ coef
    return {"overhead_s": float(coef[0]), "compute_factor": float(coef[1]), "comm_factor": float(coef[2]),
            "spearman_of_fit": spearman(fitted, y)}


class Runner:
    """One compiled candidate driven like examples/transformer_lm.py drives its step."""

    def __init__(self, exe, names, state, batches, step_arg: bool):
        self.exe, self.names, self.state, self.batches = exe, names, dict(state), batches
        self.state_names = [n for n in names if n != "loss"]
        self.t, self.step_arg = 0, step_arg

    def __call__(self) -> float:
        self.t += 1
        extra = {"step": np.float32(self.t)} if self.step_arg else {}
        data = next(self.batches)
        out, elapsed = harness.timed(lambda: self.exe(**data, **self.state, **extra))
        results = dict(zip(self.names, out))
        self.state = {n: results[n] for n in self.state_names}
        self.loss = float(results["loss"])
        return elapsed


def time_candidates(runners: list, rounds: int, burst_s: float) -> list[dict]:
    """Median over interleaved rounds of each runner's per-round median step time. A
    runner's steps per round are as many as fill about `burst_s` (1 to 10, sized by its
    second warm-up step), so that a fast candidate's round is not one noisy step."""
    steps = dict(enumerate(runners))
    first = harness.warm_up(steps, 2)  # the first (donated) calls
    bursts = {i: max(1, min(10, round(burst_s / f))) for i, f in first.items()}
    per_round = harness.interleaved_rounds(steps, rounds, bursts, desc="candidates' rounds")
    return [{"median_s": statistics.median(p), "min_round_s": min(p), "rounds": rounds, "steps_per_round": bursts[i],
             "per_round_s": p} for i, p in per_round.items()]


def run_case(name: str, kind: str, fields: dict, count: int, top: int, rounds: int, burst_s: float,
             say=print, classic: int | None = None) -> dict:
    import jax

    from meshir.lowering.runtime import hlo_collectives as hlo_stats
    import measure
    import meshir as mi

    model = mi.CostModel("time", device=DEVICE)
    mesh = mi.Mesh(dict(MESH))
    step, params, batches = build(kind, fields, mesh)
    choice, choose_s, cands = candidates(step, kind, model, count, top, classic)
    say(f"  {len(cands)} candidates; chosen {text(choice.rules)} (auto_layout {choose_s:.2f} s)")
    names = step.program.result_names
    init = {**params, **mi.init_optimizer_state(step)}
    runners, records = [], []
    for label, c in cands:
        began = time.perf_counter()
        exe = mi.compile(step, layout=c.rules, donate=True)
        compile_s = time.perf_counter() - began
        step_arg = "step" in exe.signature.arg_names
        runners.append(Runner(exe, names, init, batches(), step_arg))
        coll = hlo_stats.summarize(hlo_stats.parse_collectives(exe.compiled_hlo_text()))
        mem = measure.memory_per_device(exe.memory_analysis())
        p, m = c.predicted, c.measured
        records.append({
            "label": label, "rules": {k: list(v) for k, v in c.rules.items()}, "text": text(c.rules),
            "model": {"seconds": p.seconds, "compute_s": p.compute_seconds, "comm_s": p.comm_seconds,
                      "flops": p.flops, "bytes": p.bytes, "memory": p.memory},
            "predicted": {"seconds": m.seconds, "compute_s": m.compute_seconds, "comm_s": m.comm_seconds,
                          "bytes": m.bytes, "bytes_by_kind": dict(m.bytes_by_kind), "collectives": m.collectives,
                          "memory": m.memory},
            "hlo_bytes_per_device": coll["bytes_per_device"], "hlo_collectives": coll["count"],
            "xla_memory_total": None if mem is None else mem["total"],
            "compile_s": compile_s,
        })
    say(f"  compiled; timing {rounds} rounds")
    timed = time_candidates(runners, rounds, burst_s)
    losses = [r.loss for r in runners]
    for rec, t in zip(records, timed):
        rec["measured"] = t
    measured = [r["measured"]["median_s"] for r in records]
    best = min(range(len(records)), key=lambda i: measured[i])
    chosen = next(i for i, r in enumerate(records) if r["label"] == "chosen")
    result = {
        "case": name, "kind": kind, "text": CASE_TEXT.get(name, name), "fields": fields, "mesh": MESH,
        "device": DEVICE, "chosen": records[chosen]["text"], "choose_s": choose_s, "exact": choice.exact,
        "visited": choice.visited,
        "candidates": records,
        "spearman": {"predicted": spearman([r["predicted"]["seconds"] for r in records], measured),
                     "model": spearman([r["model"]["seconds"] for r in records], measured),
                     "predicted_bytes_vs_hlo": spearman([r["predicted"]["bytes"] for r in records],
                                                        [r["hlo_bytes_per_device"] for r in records])},
        "diagnostic_fit": diagnostic_fit(records),
        "best": records[best]["text"],
        "chosen_over_best": measured[chosen] / measured[best],
        "chosen_rank": sorted(measured).index(measured[chosen]) + 1,
        "last_losses_finite": bool(all(math.isfinite(x) for x in losses)),
    }
    jax.clear_caches()
    return result


# ------------------------------------------------------------------------------------------
# Paper scale (a child process with 512 CPU devices)


def paper_child(quick: bool, out: Path) -> int:
    import jax

    devices = 64 if quick else 512
    jax.config.update("jax_num_cpu_devices", devices)
    import meshir as mi
    import paper_scale
    from lm import model

    say = lambda s: print(s, flush=True)  # noqa: E731
    models = paper_scale.QUICK_MODELS if quick else paper_scale.MODELS
    m49 = models["4.9B"]
    mesh = mi.Mesh(dict(m49.mesh))
    cost = mi.CostModel("time", device="tpu-v3")
    budget = "16GiB"
    result = {"devices": devices, "mesh": m49.mesh, "cost_model_device": "tpu-v3", "budget": budget}

    def compiled(step, rules):
        began = time.perf_counter()
        exe = mi.compile(step, layout=rules, donate=True)
        report = exe.compile_report
        coll = paper_scale.collectives(exe.compiled_hlo_text())
        return {"rules": {k: list((v,) if isinstance(v, str) else v) for k, v in rules.items()},
                "text": text(normal(rules)),
                "hlo_bytes_per_device": coll["bytes_per_device"],
                "hlo_by_kind": {k: v["bytes_per_device"] for k, v in coll["by_kind"].items()},
                "xla_memory": report.xla_memory, "compile_s": time.perf_counter() - began}

    # 1. the 4.9B model: chosen vs the hand 2-D layout
    cfg = model.Config(**m49.config)
    step = model.train_step(cfg, mesh, remat=True, stacked=True)
    began = time.perf_counter()
    choice = mi.auto_layout(step, memory_budget=budget, cost_model=cost)
    choose_s = time.perf_counter() - began
    say(f"4.9B: chose {text(choice.rules)} in {choose_s:.1f} s")
    say(str(choice))
    chosen = compiled(step, choice.rules)
    hand = compiled(step, paper_scale.LAYOUTS_2D["2d"])
    result["model_4_9b"] = {
        "config": m49.config, "choose_s": choose_s, "exact": choice.exact, "gap": choice.gap,
        "visited": choice.visited, "table": str(choice),
        "predicted_top": [{"text": text(normal(c.rules)), "seconds": c.cost.seconds, "bytes": c.cost.bytes,
                           "memory": c.cost.memory, "measured": c.measured is not None}
                          for c in choice.candidates[:5]],
        "chosen": chosen, "hand_2d": hand,
    }
    say(f"4.9B: chosen {chosen['hlo_bytes_per_device']:,} B/device, XLA {chosen['xla_memory']}; "
        f"hand {hand['hlo_bytes_per_device']:,} B/device, XLA {hand['xla_memory']}")

    # 2. a small model with a huge budget: data parallel
    small = dict(layers=2, d_model=64, heads=8, d_ff=256, length=64, batch=devices * 4, vocab=104)
    sstep = model.train_step(model.Config(**small), mesh, remat=True, stacked=True)
    schoice = mi.auto_layout(sstep, memory_budget="1TiB", cost_model=cost)
    say(f"small: chose {text(schoice.rules)}")
    result["small"] = {"config": small, "budget": "1TiB", "chosen": text(schoice.rules),
                       "rules": {k: list(v) for k, v in schoice.rules.items()}, "table": str(schoice),
                       "data_parallel": set(schoice.rules) == {"batch"}}

    # 3. search time by depth
    rows = []
    for layers in ((1, 2) if quick else (1, 8, 48)):
        cfg = dataclasses.replace(model.Config(**m49.config), layers=layers)
        dstep = model.train_step(cfg, mesh, remat=True, stacked=True)
        row = {"layers": layers}
        for measure_n in (0, 3):
            began = time.perf_counter()
            c = mi.auto_layout(dstep, memory_budget=budget, cost_model=cost, measure=measure_n)
            row[f"measure{measure_n}"] = {"wall_s": time.perf_counter() - began, "search_s": c.seconds,
                                          "visited": c.visited, "exact": c.exact, "chosen": text(c.rules)}
        say(f"depth {layers}: search only {row['measure0']['wall_s']:.2f} s, with measure=3 "
            f"{row['measure3']['wall_s']:.2f} s")
        rows.append(row)
    result["depth"] = rows
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


def run_paper(quick: bool, out_dir: Path) -> dict:
    part = out_dir / ".auto_layout_paper.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--paper-child", str(part)] + (["--quick"] if quick else [])
    proc = subprocess.run(cmd, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    if proc.returncode != 0 or not part.exists():
        raise SystemExit(f"the paper-scale process failed (exit {proc.returncode})")
    data = json.loads(part.read_text())
    part.unlink()
    return data


# ------------------------------------------------------------------------------------------
# The report


def _gib(n) -> str:
    from meshir.transforms.analysis.memory_estimate import format_bytes

    return "—" if n is None else format_bytes(n)


def markdown(data: dict) -> str:
    meta = data["meta"]
    ms = harness.ms
    lines = [
        "# Automatic layout, validated against measurement",
        "",
        f"`python benchmarks/auto_layout.py{' --quick' if meta['quick'] else ''}`, {meta['date']}, jax {meta['jax']}, "
        f"{meta['platform']}, {meta['cpus']} CPU cores (shared), {meta['run_s']:.0f} s in all.",
        "",
    ]
    if meta["quick"]:
        lines += ["**Quick mode: tiny sizes and few rounds; the timings below back no claim.**", ""]
    if data.get("timed"):
        lines += [
            "## Predicted vs measured step time (8 CPU devices, 4×2 mesh)",
            "",
            f"Cost model `CostModel(\"time\", device=\"{DEVICE}\")`: FLOP rate and α–β links measured by "
            "`mi.calibrate()`'s own micro-benchmarks (results/calibration.md), not fitted on these layouts. "
            "**predicted** = the model's FLOPs at that rate + the collectives of the real partitioning "
            "(`measure_candidate`, transforms/layout_search/choose.py) priced α–β: what `Candidate.cost` is once "
            "measured; **model** = the search's estimate alone (its own collectives). **measured** = median over "
            "interleaved rounds of the per-round median step time, compiled with `mi.compile(layout=rules, "
            "donate=True)` and run as a user runs it (fresh NumPy batch, results fed back). "
            "Candidates: the chosen one (`mi.auto_layout`, default `measure=3`), the top of the search's table, "
            "the classic layouts, and more of the table up to the count.",
            "",
            "| case | candidates | Spearman (predicted) | Spearman (model) | chosen | chosen / best measured | "
            "rank of chosen | best measured | targets |",
            "|---|---:|---:|---:|---|---:|---:|---|---|",
        ]
        for c in data["timed"]:
            rho = c["spearman"]["predicted"]
            ok = rho >= 0.8 and c["chosen_over_best"] <= 1.10 and len(c["candidates"]) >= 12
            verdict = "—" if meta["quick"] else ("met" if ok else "**missed**")
            lines.append(f"| {c['text']} | {len(c['candidates'])} | **{rho:.2f}** | {c['spearman']['model']:.2f} | "
                         f"`{c['chosen']}` | **{c['chosen_over_best']:.3f}×** | {c['chosen_rank']} | `{c['best']}` | "
                         f"{verdict} |")
        for c in data["timed"]:
            lines += ["", f"### {c['text']}", "",
                      f"auto_layout: {c['choose_s']:.2f} s ({'exact' if c['exact'] else 'time limit'}, "
                      f"{c['visited']} nodes). Spearman of predicted bytes vs bytes in XLA's HLO: "
                      f"{c['spearman']['predicted_bytes_vs_hlo']:.2f}."]
            fit = c.get("diagnostic_fit")
            if fit:
                lines[-1] += (f" Diagnostic (no claim uses it): least squares measured ≈ {ms(fit['overhead_s'])} ms + "
                              f"{fit['compute_factor']:.2f}·compute + {fit['comm_factor']:.2f}·comm "
                              f"(Spearman of that fit {fit['spearman_of_fit']:.2f}).")
            lines += ["",
                      "| # | candidate | rules | predicted ms (compute + comm) | model ms | measured ms | "
                      "predicted bytes/device | HLO bytes/device | collectives partitioned / in HLO | XLA memory |",
                      "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
            order = sorted(range(len(c["candidates"])), key=lambda i: c["candidates"][i]["measured"]["median_s"])
            for i in order:
                r = c["candidates"][i]
                p = r["predicted"]
                lines.append(
                    f"| {order.index(i) + 1} | {r['label']} | `{r['text']}` | {ms(p['seconds'])} "
                    f"({ms(p['compute_s'])} + {ms(p['comm_s'])}) | {ms(r['model']['seconds'])} | "
                    f"**{ms(r['measured']['median_s'])}** | {p['bytes']:,} | {r['hlo_bytes_per_device']:,} | "
                    f"{p['collectives']} / {r.get('hlo_collectives', '—')} | {_gib(r['xla_memory_total'])} |")
    paper = data.get("paper")
    if paper:
        m = paper["model_4_9b"]
        ch, hand = m["chosen"], m["hand_2d"]
        budget = 16 * GIB
        ch_mem = ch["xla_memory"]["total"] if ch["xla_memory"] else None
        hand_mem = hand["xla_memory"]["total"] if hand["xla_memory"] else None
        bytes_ok = ch["hlo_bytes_per_device"] <= hand["hlo_bytes_per_device"]
        fits = ch_mem is not None and ch_mem <= budget
        lines += [
            "",
            f"## Paper scale: compile only, {paper['devices']} CPU devices",
            "",
            f"4.9B LM (examples/lm, stacked layers, remat, Adam, f32; {m['config']}) on mesh {paper['mesh']}: "
            f"`mi.auto_layout(step, memory_budget=\"{paper['budget']}\", cost_model=CostModel(\"time\", "
            f"device=\"{paper['cost_model_device']}\"))` ({m['choose_s']:.2f} s, "
            f"{'exact' if m['exact'] else 'time limit, gap ' + format(m['gap'], '.0%')}, {m['visited']} nodes), then "
            "the chosen layout and Mesh-TF's hand layout compiled with `donate=True`. Bytes per device: the "
            "collectives of XLA's compiled HLO (lowering/runtime/hlo_collectives.py, a loop's collectives once per iteration); memory: "
            "XLA's `memory_analysis` (argument + output + temp − alias).",
            "",
            "| layout | rules | HLO bytes/device | by kind | XLA memory/device | fits budget | compile s |",
            "|---|---|---:|---|---:|---|---:|",
        ]
        for label, r, mem in (("chosen", ch, ch_mem), ("Mesh-TF hand 2-D", hand, hand_mem)):
            kinds = "<br>".join(f"{k} {v:,}" for k, v in r["hlo_by_kind"].items()) or "none"
            lines.append(f"| {label} | `{r['text']}` | {r['hlo_bytes_per_device']:,} | {kinds} | {_gib(mem)} | "
                         f"{'yes' if mem is not None and mem <= budget else 'no'} | {r['compile_s']:.1f} |")
        small = paper["small"]
        lines += [
            "",
            f"- chosen moves no more bytes per device than the hand layout: **{'met' if bytes_ok else 'missed'}** "
            f"({ch['hlo_bytes_per_device'] / hand['hlo_bytes_per_device']:.3f}×)",
            f"- chosen fits {paper['budget']} by XLA's memory analysis: **{'met' if fits else 'missed'}** "
            f"({_gib(ch_mem)})",
            f"- a small model ({small['config']}) with a {small['budget']} budget: chooses `{small['chosen']}`: "
            f"data parallel **{'met' if small['data_parallel'] else 'missed'}**",
            "",
            "The 4.9B search's table:",
            "",
            "```",
            m["table"],
            "```",
            "",
            "### Search time by depth (stacked Transformer, the 4.9B widths, 16 GiB budget)",
            "",
            "| layers | search only (`measure=0`) s | nodes | with `measure=3` s | chosen | < 5 s |",
            "|---:|---:|---:|---:|---|---|",
        ]
        for row in paper["depth"]:
            a, b = row["measure0"], row["measure3"]
            lines.append(f"| {row['layers']} | {a['wall_s']:.2f} | {a['visited']} | {b['wall_s']:.2f} | "
                         f"`{b['chosen']}` | {'met' if max(a['wall_s'], b['wall_s']) < 5 else '**missed**'} |")
    if data.get("conclusions"):
        lines += ["", "## Conclusions", ""] + data["conclusions"]
    return "\n".join(lines) + "\n"


#: What the full run's numbers say (written after reading them; the verdicts above are computed).
NOTES: list[str] = [
    "- **All four timed cases: met.** Spearman 0.98 and 0.98 (MLP), 0.93 and 0.82 (Transformer); the chosen "
    "layout is 1.000×, 1.000×, 1.094× and 1.000× the best measured. The predicted FLOPs equal XLA's cost "
    "analysis within 1% and the predicted bytes equal the HLO's (Spearman 1.00 on every case).",
    "- **This run** follows the change of the model's memory from a floor to liveness (docs/decisions.md); "
    "the four choices are the ones of the two runs before it (results/auto_layout_runs/floor_memory_model.md "
    "and repeat_timed.md). Across the three runs: Spearman 0.98–0.99, 0.97–0.99, 0.86–0.94 and 0.82–0.83; the "
    "README-size Transformer's chosen layout (`batch:x; d_ff:y; heads:y; vocab:y`) 1.043–1.094× its best "
    "(the same layout without `vocab:y`), the others 1.000–1.014×. These spreads are the measurement's "
    "run-to-run noise on this shared 2-core machine.",
    "- **The history of the constants.** The first run priced time with a `cpu-virtual` row from one "
    "`mi.calibrate()` run made while another job loaded the machine: α = 65 µs per ring step, 26 GFLOP/s. It "
    "missed both Transformer cases (README size Spearman 0.22, chosen 1.06×; 4 layers 0.79, 1.10×). "
    "Re-pricing the stored candidates showed the Transformer rankings hinge on α. The row was then replaced "
    "by the median of three `mi.calibrate()` runs on the quiet machine (its own micro-benchmarks only; "
    "results/calibration_runs/quiet_run*): α = 7 µs (the runs: 0, 7, 18 µs), β = 2.1 GB/s to 4 MiB sent and "
    "0.43 GB/s beyond, 25 GFLOP/s. No constant was chosen by its effect on these cases, but the choice to "
    "recalibrate followed the misses, so read the Transformer rows with that history: α sits under the "
    "~0.2 ms call overhead the calibration subtracts and is its least certain figure, and the Transformer "
    "cases are the ones sensitive to it.",
    "- **What the model leaves out**, and where it shows in the diagnostic fits: per-op cost and memory-bound "
    "elementwise ops (counted at 1 FLOP per element at the matmul rate), combined and overlapped collectives "
    "(XLA's CPU runtime combines independent all-reduces; the model prices each alone, with no overlap).",
    "- **Paper scale: met.** Under 16 GiB with the `tpu-v3` constants the search picks exactly Mesh-TF's hand "
    "layout (batch:x; heads, d_ff, vocab:y): the same HLO bytes per device and 4.06 GiB by XLA. The small "
    "model (2 layers, d_model 64, batch 2048) with a 1 TiB budget comes out `batch:x`, data parallel over one "
    "axis (with α = 1 µs per ring step the model finds a 512-device ring's latency dearer than the 16-way "
    "split's extra compute). The search does not grow much with depth: 247 → 736 nodes and 0.35 → 1.24 s "
    "from 1 to 48 layers (search only; pricing liveness made it about twice as slow as with the floor), "
    "1.0–1.7 s with `measure=3`; at 48 layers the 2-D layout no longer fits 16 GiB, hence another choice.",
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, few candidates; writes under results/quick/")
    p.add_argument("--parts", default="timed,paper", help="comma-separated: timed, paper")
    p.add_argument("--cases", help="comma-separated subset of the cases")
    p.add_argument("--rounds", type=int, help="interleaved timing rounds (default 5; --quick 1)")
    p.add_argument("--out", help="output folder")
    p.add_argument("--paper-child", help=argparse.SUPPRESS)
    p.add_argument("--rewrite", action="store_true",
                   help="measure nothing: rewrite auto_layout.md in --out from its auto_layout.json (with NOTES)")
    args = p.parse_args(argv)
    if args.paper_child:
        return paper_child(args.quick, Path(args.paper_child))
    if args.rewrite:
        out = harness.results_dir(args.out, quick=False)
        data = json.loads((out / "auto_layout.json").read_text())
        if not data["meta"]["quick"]:
            data["conclusions"] = NOTES
        harness.write_report(out, "auto_layout", data, markdown(data))
        return 0

    began = time.perf_counter()
    out = harness.results_dir(args.out, args.quick)
    out.mkdir(parents=True, exist_ok=True)
    parts = args.parts.split(",")
    table = QUICK_CASES if args.quick else CASES
    names = args.cases.split(",") if args.cases else list(table)
    data = {"timed": [], "paper": None}
    if "timed" in parts:
        harness.ensure_devices(8)
        count, top, classic = (4, 2, 2) if args.quick else (14, 6, None)
        rounds = args.rounds or (1 if args.quick else 5)
        burst = 0.0 if args.quick else 0.15
        for name in names:
            kind, fields = table[name]
            print(f"{name}: {CASE_TEXT.get(name, name)}", flush=True)
            t0 = time.perf_counter()
            rec = run_case(name, kind, fields, count, top, rounds, burst, say=lambda s: print(s, flush=True),
                           classic=classic)
            rec["run_s"] = time.perf_counter() - t0
            print(f"  Spearman {rec['spearman']['predicted']:.2f} (model {rec['spearman']['model']:.2f}); chosen "
                  f"{rec['chosen']} at {rec['chosen_over_best']:.3f}x the best ({rec['best']}); "
                  f"{rec['run_s']:.0f} s", flush=True)
            data["timed"].append(rec)
    if "paper" in parts:
        data["paper"] = run_paper(args.quick, out)
    data["meta"] = {**harness.machine(), "quick": args.quick, "run_s": time.perf_counter() - began,
                    "command": "python benchmarks/auto_layout.py" + (" --quick" if args.quick else "")}
    if not args.quick:
        data["conclusions"] = NOTES
    harness.write_report(out, "auto_layout", data, markdown(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
