"""GPipe pipelining of the example LM (meshir.layers.pipeline): what the schedule costs in
matmul FLOPs, collectives along the stage axis, memory and step time, in one process.

    python benchmarks/pipeline.py             # 4 layers, the README's other sizes (results/pipeline.*)
    python benchmarks/pipeline.py --quick     # tiny layers, M in (1, 2), one round (results/quick/)

The LM of examples/lm (`model.Config(layers=4)`: batch 16, length 64, d_model 64, 8 heads, d_ff
256), training step `mi.compile(model.train_step(cfg, mesh, remat=...), layout=rules,
donate=True)` called as examples/transformer_lm.py calls it, in these variants on 8 CPU devices:

- `pipe M=m`: P = 2 stages (`model.Config(stages=2, pipeline_microbatches=m)`) on
  `model.layout("2d", stages=2)`: mesh {stage: 2, x: 2, y: 2}, rules batch:x; heads, d_ff,
  vocab:y; stage:stage; m in (1, 2, 4, 8); with and without `remat=True`;
- `dp-stage`: the unpipelined model on the same mesh with the stage axis used for data
  parallelism instead: rules {batch: (stage, x); heads, d_ff, vocab: y}; `dp-stage stacked` the
  same with its layers as one mi.scan (`stacked=True`), the loop each pipeline stage runs;
- `2d`: the unpipelined model on the plain 4x2 mesh (`model.layout("2d")`).

1. Matmul FLOPs per device (hlo_stats.dot_flops of XLA's compiled HLO; loop bodies counted per
   iteration), whole step and layers alone: the difference between the same variant built at
   two depths (4 and 8 layers), where the embedding, the tied head and the optimizer cancel,
   and the dots inside the step's loops (the layers are the only loops; --quick measures the
   layers this way alone, one compilation per variant). The layers' ratio to `dp-stage
   stacked` is asserted to be exactly (M+P-1)/M; to the unstacked `dp-stage` it is higher by
   what a scan's backward recomputes.
2. Collectives along the stage axis from the compile report (records whose axes include
   `stage`): the collective permutes (`collective_permute`, marked `halo`: the shifts between ticks) apart from the
   rest; and every collective of the compiled HLO, by whether its device groups cross the stage
   axis (no all-gather may).
3. Memory per device: XLA's memory_analysis (temp, argument, output) and MeshIR's estimate
   (compile_report.memory), with and without remat, here and at a larger activation size
   (batch 64 x length 128; also 16 layers at M=4), and where XLA schedules the recomputation.
4. Step time in interleaved rounds, as ratios to the `2d` step (8 virtual devices share 2
   cores: no bubble can show).
5. The first-step loss of every variant equals the `2d` one (rtol 1e-5).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
from meshir.lowering.runtime import hlo_collectives as hlo_stats  # noqa: E402

P = 2
RTOL = 1e-5
DP_MESH = {"stage": 2, "x": 2, "y": 2}
DP_RULES = {"batch": ("stage", "x"), "heads": "y", "d_ff": "y", "vocab": "y"}

#: `baselines`: the unpipelined variants compiled (the first is the reference of the losses
#: and the step times); `remat`: the M compiled with remat too; `large`: the config changes
#: of the larger activation size whose memory is compared with and without remat (None: not
#: measured). --quick keeps to 7 compilations (each takes XLA:CPU seconds, however small the
#: model): 2 stages of 2 layers (not 1: a loop of one iteration is unrolled by XLA, which then
#: merges the scan's recomputation with the forward pass, so its FLOPs are not those of the
#: deeper model's loop).
SIZES = {
    "default": {"config": {"layers": 4}, "deeper": 8, "microbatches": (1, 2, 4, 8), "remat": (1, 2, 4, 8),
                "baselines": ("2d", "dp-stage", "dp-stage stacked"), "large": {"batch": 64, "length": 128},
                "deep_stages": {"layers": 16, "microbatches": 4}},
    "quick": {"config": {"layers": 4, "d_model": 32, "length": 16, "batch": 8}, "deeper": None, "microbatches": (1, 2),
              "remat": (2,), "baselines": ("dp-stage stacked",), "large": None, "deep_stages": None},
}


# ------------------------------------------------------------------------------------------
# Variants


@dataclasses.dataclass
class Variant:
    name: str
    cfg: object             # model.Config
    kind: str               # "pipe", "dp-stage", "dp-stage stacked", "2d"
    remat: bool = False

    @property
    def stacked(self) -> bool:
        return self.kind == "dp-stage stacked"


def mesh_and_rules(v: Variant):
    import meshir as mi
    from lm import model

    if v.kind == "pipe":
        return model.layout("2d", stages=P)
    if v.kind == "2d":
        return model.layout("2d")
    return mi.Mesh(dict(DP_MESH)), dict(DP_RULES)


def compile_variant(v: Variant):
    """(the train step, its executable, seconds to compile)."""
    import meshir as mi
    from lm import model

    mesh, rules = mesh_and_rules(v)
    began = time.perf_counter()
    step = model.train_step(v.cfg, mesh, remat=v.remat, stacked=v.stacked)
    exe = mi.compile(step, layout=rules, donate=True)
    return step, exe, time.perf_counter() - began


def initial_state(v: Variant, step) -> dict:
    """Parameters (model.init_params: the same values pipelined, stacked or not) and fresh
    optimizer state."""
    import meshir as mi
    from lm import model

    params = model.init_params(v.cfg)
    if v.stacked:
        params = model.stack_params(v.cfg, params)
    return {"params": params, "opt_state": mi.init_optimizer_state(step)}


# ------------------------------------------------------------------------------------------
# What one executable shows


def memory(exe) -> dict:
    stats = exe.memory_analysis()
    xla = None
    if stats is not None:
        xla = {k: int(getattr(stats, f"{k}_size_in_bytes")) for k in ("argument", "output", "temp", "alias")}
        xla["total"] = xla["temp"] + xla["argument"] + xla["output"]
    est = exe.compile_report.memory
    return {"xla": xla, "meshir": None if est is None else {"total": int(est.total),
                                                             "categories": {k: int(b) for k, b in
                                                                            est.categories.items()}}}


def stage_records(exe) -> dict:
    """The compile report's collectives along `stage`: the permutes (collective_permute halo exchanges, the shifts
    of the slots) and the rest, each with its bytes per device and repeats."""
    permutes, others = [], []
    for c in exe.compile_report.collectives:
        if "stage" not in c.axes:
            continue
        rec = {"kind": c.kind, "axes": list(c.axes), "detail": c.detail, "value": c.value, "operand": c.operand,
               "bytes_per_device": int(c.bytes_per_device), "repeats": c.repeats}
        (permutes if c.halo else others).append(rec)

    def total(recs):
        return sum(r["bytes_per_device"] * (r["repeats"] or 1) for r in recs)

    return {"permutes": {"count": len(permutes), "each_bytes": sorted({r["bytes_per_device"] for r in permutes}),
                         "repeats": sorted({r["repeats"] for r in permutes}, key=str),
                         "bytes_per_device": total(permutes)},
            "others": {"count": len(others), "bytes_per_device": total(others), "records": others}}


def bytes_by_axes(exe) -> dict:
    """Bytes per device per step in the compile report, by the axes a collective runs over
    (a record in a scan body once per iteration)."""
    out = {}
    for c in exe.compile_report.collectives:
        key = ",".join(c.axes) or "-"
        out[key] = out.get(key, 0) + int(c.bytes_per_device) * (c.repeats or 1)
    return dict(sorted(out.items()))


def hlo_collectives(hlo: str, stage_block: int | None) -> dict:
    """Every collective of the compiled HLO by kind and by whether its groups cross the stage
    axis (devices whose ids differ in id // stage_block: the stage coordinate, the mesh's
    major axis); bytes per device counted once per run of their computation."""
    found = hlo_stats.parse_collectives(hlo)
    repeats = hlo_stats.computation_repeats(hlo)
    out = {}
    for c in found:
        if stage_block is None:
            where = "-"
        elif c.groups is None:
            where = "unknown"
        else:
            where = "crosses stage" if any(len({d // stage_block for d in g}) > 1 for g in c.groups) else "within stage"
        e = out.setdefault(f"{c.kind} ({where})", {"count": 0, "bytes_per_device": 0})
        e["count"] += 1
        e["bytes_per_device"] += c.bytes_per_device * (repeats.get(c.computation) or 1)
    return dict(sorted(out.items()))


def loop_dot_flops(hlo: str) -> int:
    """The part of hlo_stats.dot_flops inside `while` bodies (and what they call), once per
    iteration: the layers of a stacked model or of each pipeline stage (each an mi.scan),
    nothing of the embedding, the head or the optimizer. A check of the two-depth difference,
    and --quick's measure of the layers (one compilation instead of two)."""
    calls, bodies, computation = {}, set(), ""
    for line in hlo.splitlines():
        m = hlo_stats._COMPUTATION.match(line)
        if m and "=" not in line.split("(")[0]:
            computation = m.group(1)
            continue
        for key, callee in hlo_stats._CALLEE.findall(line):
            calls.setdefault(computation, set()).add(callee)
            if key == "body" and " while(" in line:
                bodies.add(callee)
        for group in hlo_stats._BRANCHES.findall(line):
            calls.setdefault(computation, set()).update(c.lstrip("%") for c in hlo_stats._split_top(group))
    inside, todo = set(), list(bodies)
    while todo:
        c = todo.pop()
        if c not in inside:
            inside.add(c)
            todo.extend(calls.get(c, ()))
    repeats = hlo_stats.computation_repeats(hlo)
    total, computation, shapes = 0, "", {}
    for line in hlo.splitlines():
        m = hlo_stats._COMPUTATION.match(line)
        if m and "=" not in line.split("(")[0]:
            computation, shapes = m.group(1), dict(hlo_stats._PARAM.findall(m.group(2)))
            continue
        m = hlo_stats._INSTR.match(line)
        if not m:
            continue
        name, shape, opcode, rest = m.groups()
        shapes[name] = shape
        if opcode != "dot" or computation not in inside:
            continue
        operands, attrs = hlo_stats._operands_and_attrs(rest)
        lhs = shapes[operands[0].split()[-1].lstrip("%")]
        lhs_dims = [int(d) for d in hlo_stats._ARRAY.search(lhs).group(2).split(",") if d]
        out_dims = [int(d) for d in hlo_stats._ARRAY.search(shape).group(2).split(",") if d]
        contracted = hlo_stats._DOT_DIMS.search(attrs).group(1)
        k = int(np.prod([lhs_dims[int(i)] for i in contracted.split(",") if i]))
        total += 2 * int(np.prod(out_dims)) * k * repeats[computation]
    return total


def loop_schedule(hlo: str) -> str:
    """The `while` loops of the entry computation in XLA's schedule (the printed order of a
    scheduled module), told apart by the size of their state tuples: with remat three kinds, F
    (a tick's forward, saving nothing), R (the forward again, stacking the carries its
    backward reads) and B (a tick's backward, with every parameter's gradient); without, F (the
    forward, stacking its carries) and B. "F R F R B B" runs each recomputation in the forward
    phase; "F F R B R B" just before the backward of its tick."""
    sizes, entry = [], False
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            entry = True
        elif entry and line.startswith("}"):
            break
        elif entry and " while(" in line:
            sizes.append(line.split("=", 1)[1].split(" while(")[0].count("f32["))
    kinds = sorted(set(sizes))
    names = {3: "FRB", 2: "FB", 1: "L"}.get(len(kinds), "?" * len(kinds))
    return " ".join(names[kinds.index(n)] for n in sizes)


def stage_param_bytes(cfg) -> int:
    """Bytes per device of one stage's parameters (heads and d_ff split over y): what an
    all-reduce of their gradients over x (2 devices, 2 (n-1)/n B = B) sends."""
    from lm import model

    total = 0
    for name, dims in model.param_dims(cfg).items():
        if name.startswith(model.PIPELINE):
            n = int(np.prod([d.size for d in dims])) // P
            total += n // (2 if any(d.name in ("heads", "d_ff") for d in dims) else 1) * 4
    return total


def inspect(v: Variant, exe, seconds: float) -> dict:
    hlo = exe.compiled_hlo_text()
    stage_block = DP_MESH["x"] * DP_MESH["y"] if v.kind != "2d" else None
    out = {"name": v.name, "kind": v.kind, "remat": v.remat, "layers": v.cfg.layers,
           "microbatches": v.cfg.pipeline_microbatches if v.kind == "pipe" else None,
           "batch": v.cfg.batch, "length": v.cfg.length, "compile_s": seconds,
           "dot_flops": hlo_stats.dot_flops(hlo), "loop_dot_flops": loop_dot_flops(hlo), "memory": memory(exe),
           "bytes_by_axes": bytes_by_axes(exe), "loop_schedule": loop_schedule(hlo) if v.kind == "pipe" else None,
           "hlo_collectives": hlo_collectives(hlo, stage_block)}
    if v.kind == "pipe":
        out["stage"] = stage_records(exe)
    return out


# ------------------------------------------------------------------------------------------
# Measuring


def batch(cfg) -> dict:
    rng = np.random.default_rng(0)
    return {"tokens": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32),
            "targets": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32)}


def stepper(exe, state: dict, data: dict):
    """A self-timed training step (harness.interleaved_rounds): the call as transformer_lm.py
    makes it, its results fed back as the next step's parameters and optimizer state."""
    current = {"t": 1, **state}

    def step():
        results, seconds = harness.timed(lambda: exe(**data, **current["params"], **current["opt_state"],
                                                     step=np.float32(current["t"]))._asdict())
        current["params"] = {k: results[k] for k in current["params"]}
        current["opt_state"] = {k: results[k] for k in current["opt_state"]}
        current["t"] += 1
        current["loss"] = float(results["loss"])
        return seconds

    return step, current


def measure(size: str, rounds: int, steps: int, warmup: int, say=print) -> dict:
    from lm import model

    spec = SIZES[size]
    base = model.Config(**spec["config"])
    Ms, refs = spec["microbatches"], spec["baselines"]

    def pipe(cfg, M):
        return dataclasses.replace(cfg, stages=P, pipeline_microbatches=M)

    run = [Variant(ref, base, ref) for ref in refs]
    run += [Variant("dp-stage remat", base, "dp-stage", True)] if "dp-stage" in refs else []
    run += [Variant(f"pipe M={M}", pipe(base, M), "pipe") for M in Ms]
    run += [Variant(f"pipe M={M} remat", pipe(base, M), "pipe", True) for M in spec["remat"]]
    flops_only = []
    if spec["deeper"]:
        deep = dataclasses.replace(base, layers=spec["deeper"])
        flops_only = [Variant(ref, deep, ref) for ref in refs if ref != "2d"]
        flops_only += [Variant(f"pipe M={M}", pipe(deep, M), "pipe") for M in Ms]
    large = []
    if spec["large"]:
        big = dataclasses.replace(base, **spec["large"])
        large = [Variant("dp-stage", big, "dp-stage"), Variant("dp-stage remat", big, "dp-stage", True)]
        large += [Variant(f"pipe M={M}{r}", pipe(big, M), "pipe", bool(r)) for M in Ms for r in ("", " remat")]
        if spec["deep_stages"]:  # more layers per stage: more carries per tick that remat could drop
            d = spec["deep_stages"]
            deep_big = pipe(dataclasses.replace(big, layers=d["layers"]), d["microbatches"])
            large += [Variant(f"pipe M={d['microbatches']}, {d['layers']} layers{r}", deep_big, "pipe", bool(r))
                      for r in ("", " remat")]

    data = batch(base)
    records, steps_fns, losses = {}, {}, {}
    for v in run:
        step, exe, seconds = compile_variant(v)
        records[v.name] = inspect(v, exe, seconds)
        fn, current = stepper(exe, initial_state(v, step), data)
        fn()  # the first step: its loss is compared, and it warms the executable up
        losses[v.name] = current["loss"]
        if not v.remat:
            steps_fns[v.name] = fn
        say(f"  {v.name}: compiled in {seconds:.1f} s, first-step loss {current['loss']:.7f}, "
            f"{records[v.name]['dot_flops']:,} FLOPs/device", flush=True)
    deeper = {}
    for v in flops_only:
        _, exe, seconds = compile_variant(v)
        hlo = exe.compiled_hlo_text()
        deeper[v.name] = {"dot_flops": hlo_stats.dot_flops(hlo), "loop_dot_flops": loop_dot_flops(hlo),
                          "compile_s": seconds}
        say(f"  {v.name}, {v.cfg.layers} layers: compiled in {seconds:.1f} s, {deeper[v.name]['dot_flops']:,} "
            "FLOPs/device", flush=True)
    large_records = {}
    for v in large:
        _, exe, seconds = compile_variant(v)
        hlo = exe.compiled_hlo_text()
        large_records[v.name] = {"name": v.name, "remat": v.remat, "layers": v.cfg.layers, "compile_s": seconds,
                                 "memory": memory(exe), "dot_flops": hlo_stats.dot_flops(hlo)}
        if v.kind == "pipe":
            large_records[v.name]["loop_schedule"] = loop_schedule(hlo)
        x = large_records[v.name]["memory"]["xla"]
        say(f"  {v.name}, batch {v.cfg.batch} x length {v.cfg.length}: compiled in {seconds:.1f} s, temp "
            f"{harness.fmt_bytes(x['temp'])}", flush=True)

    # 5. the first-step losses
    want = losses[refs[0]]
    loss_check = {k: {"loss": x, "rel_diff": abs(x - want) / abs(want)} for k, x in losses.items()}
    bad = {k: r for k, r in loss_check.items() if r["rel_diff"] > RTOL}
    if bad:
        raise AssertionError(f"first-step losses differ from {refs[0]}'s {want!r} by more than rtol {RTOL}: {bad}")

    # 1. FLOPs: the layers from two depths (their difference), and from one (its loops' dots)
    flops = []
    for M in Ms:
        name = f"pipe M={M}"
        row = {"M": M, "expected": (M + P - 1) / M, "pipe": records[name]["dot_flops"],
               "pipe_loops": records[name]["loop_dot_flops"], "stack_forward_analytic": stack_forward_flops(base, M)}
        for ref in refs:
            row[f"step_ratio_{ref}"] = row["pipe"] / records[ref]["dot_flops"]
            if ref == "dp-stage stacked":
                row[f"loops_ratio_{ref}"] = row["pipe_loops"] / records[ref]["loop_dot_flops"]
        exact = [(row["pipe_loops"], records["dp-stage stacked"]["loop_dot_flops"], "the dots in their loops")]
        if deeper:
            row["pipe_deeper"] = deeper[name]["dot_flops"]
            for ref in refs:
                if ref in deeper:
                    row[f"layers_ratio_{ref}"] = ((row["pipe_deeper"] - row["pipe"])
                                                  / (deeper[ref]["dot_flops"] - records[ref]["dot_flops"]))
            exact.append((row["pipe_deeper"] - row["pipe"], deeper["dp-stage stacked"]["dot_flops"]
                          - records["dp-stage stacked"]["dot_flops"], f"{spec['deeper']} minus {base.layers} layers"))
        if f"{name} remat" in records:
            row["pipe_remat"] = records[f"{name} remat"]["dot_flops"]
            row["remat_extra"] = row["pipe_remat"] - row["pipe"]
        flops.append(row)
        for pipe_f, ref_f, how in exact:
            if pipe_f * M != ref_f * (M + P - 1):
                raise AssertionError(f"M={M}: the layers' FLOPs ({how}) are {pipe_f / ref_f!r}x those of the stacked "
                                     f"data-parallel model, not (M+P-1)/M = {row['expected']!r}")
    layer_flops = {ref: deeper[ref]["dot_flops"] - records[ref]["dot_flops"] for ref in deeper if ref in refs}
    if deeper and spec["deeper"] == 2 * base.layers:  # the two ways agree: the deeper model's extra layers are exactly its loops' extra iterations
        for name, d in deeper.items():
            if d["dot_flops"] - records[name]["dot_flops"] != records[name]["loop_dot_flops"] and name != "dp-stage":
                raise AssertionError(f"{name}: {spec['deeper']} minus {base.layers} layers is "
                                     f"{d['dot_flops'] - records[name]['dot_flops']:,} FLOPs, its loops' dots "
                                     f"{records[name]['loop_dot_flops']:,}")
        layer_flops["analytic_saved"] = 3 * layers_forward_flops(base, spec["deeper"] - base.layers, base.batch // 4)

    # 4. step time
    per_round = harness.interleaved_rounds(steps_fns, rounds, steps, warmup=warmup) if rounds else {}
    timing = {}
    for k in steps_fns if per_round else ():
        timing[k] = {"median_step_s": statistics.median(per_round[k]),
                     "ratio": {ref: statistics.median(harness.round_ratios(per_round, k, ref))
                               for ref in refs if ref in steps_fns},
                     "rounds": per_round[k]}

    return {"size": size, "config": base.to_dict(), "deeper_layers": spec["deeper"], "stages": P,
            "microbatches": list(Ms), "remat_microbatches": list(spec["remat"]), "baselines": list(refs),
            "large": spec["large"], "dp_mesh": DP_MESH,
            "dp_rules": {k: list(v) if isinstance(v, tuple) else v for k, v in DP_RULES.items()},
            "pipe_layout": model.format_rules(model.layout("2d", stages=P)[1]),
            "stage_param_bytes": stage_param_bytes(pipe(base, Ms[0])),
            "variants": records, "deeper": deeper, "flops": flops, "layer_flops": layer_flops,
            "losses": loss_check, "large_memory": large_records, "timing": timing,
            "rounds": rounds, "steps_per_round": steps}


def layers_forward_flops(cfg, layers: int, rows: int) -> int:
    """Matmul FLOPs per device of `layers` layers' forward on `rows` sequences per device,
    heads and d_ff split over y (2): q, k, v, o projections, attention logits and weighted
    sum, the feed-forward's two matmuls."""
    hk = cfg.heads * cfg.d_k
    per_row = (2 * cfg.length * cfg.d_model * hk * 4 + 2 * 2 * cfg.length * cfg.length * hk
               + 2 * 2 * cfg.length * cfg.d_model * cfg.d_ff)
    return layers * rows * per_row // 2


def stack_forward_flops(cfg, M: int) -> int:
    """One forward pass of the pipelined stack per device: M+P-1 ticks of layers/P layers on
    one microbatch (batch/M rows, split over x = 2)."""
    return (M + P - 1) * layers_forward_flops(cfg, cfg.layers // P, cfg.batch // M // 2)


# ------------------------------------------------------------------------------------------
# Report


def _g(n) -> str:
    return f"{n:,}"


def markdown(meta: dict, r: dict) -> str:
    cfg, Ms, V, refs = r["config"], r["microbatches"], r["variants"], r["baselines"]
    pipes = [f"pipe M={M}" for M in Ms]
    quick = " --quick" if r["size"] == "quick" else ""
    lines = [
        "# GPipe pipelining of the character LM (`benchmarks/pipeline.py`)", "",
        f"`python benchmarks/pipeline.py{quick}`, {meta['date']}, jax {meta['jax']}, {meta['platform']}, "
        f"{meta['cpus']} CPUs, 8 virtual CPU devices; {r['wall_s']:.0f} s in all.", "",
        "Model: " + ", ".join(f"{k} {cfg[k]}" for k in ("layers", "d_model", "heads", "d_ff", "length", "batch", "vocab"))
        + "; Adam, f32. The training step `mi.compile(model.train_step(cfg, mesh, remat=...), layout=rules, "
        "donate=True)`, called as examples/transformer_lm.py calls it. Variants:", "",
        f"- **pipe M=m**: P = {r['stages']} stages (each {cfg['layers'] // r['stages']} layers, one `mi.scan`), m "
        f"microbatches, on `model.layout(\"2d\", stages={r['stages']})`: mesh stage=2, x=2, y=2, rules "
        f"`{r['pipe_layout']}`; **remat**: `remat=True` (each stage recomputed in the backward pass);",
        "- **dp-stage**: the unpipelined model on the same mesh with the stage axis as a data axis: rules "
        "`batch:(stage,x), heads:y, d_ff:y, vocab:y`; **dp-stage stacked**: the same with its layers as one "
        "`mi.scan` (`stacked=True`), the loop each pipeline stage runs on its slot;",
        "- **2d**: the unpipelined model on the plain 4x2 mesh (`model.layout(\"2d\")`: batch:x; heads, d_ff, vocab:y).",
        "",
        "## 1. Matmul FLOPs per device", "",
        "`hlo_stats.dot_flops` of XLA's compiled HLO (2 × result elements × contracted size per `dot`, a loop body "
        "once per iteration), per device. *Layers* leaves out the embedding, the tied head and the optimizer, two "
        "ways: *loops*, the dots inside the compiled step's `while` bodies (every pipeline stage's and the stacked "
        "model's layers are an `mi.scan`: the layers, and nothing else, loop)"
        + ("" if not r["deeper_layers"] else
           f"; *{r['deeper_layers']} − {cfg['layers']}*, the difference between the variant built with "
           f"{r['deeper_layers']} and with {cfg['layers']} layers (the same P and M), where everything but "
           f"{r['deeper_layers'] - cfg['layers']} layers cancels (it equals the loops' dots of the "
           f"{cfg['layers']}-layer step exactly, asserted)")
        + ". Each as a ratio to the same of a data-parallel model. *remat extra*: the FLOPs `remat=True` adds, over "
        "one forward pass of the pipelined stack (analytic: M+P-1 ticks × layers/P layers on batch/(2M) rows per "
        "device).", "",
    ]
    lf = r["layer_flops"]
    step_refs = [ref for ref in refs if ref != "2d"]
    depth_refs = [ref for ref in ("dp-stage stacked", "dp-stage") if ref in lf]
    depth = f"{r['deeper_layers']} − {cfg['layers']}"
    head = (["M", "(M+P-1)/M", "pipe FLOPs/device"] + [f"step / {ref}" for ref in step_refs]
            + ["layers (loops) / dp-stage stacked"] + [f"layers ({depth}) / {ref}" for ref in depth_refs]
            + ["remat FLOPs/device", "remat extra / one forward"])
    lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for row in r["flops"]:
        cells = [str(row["M"]), f"{row['expected']:.4f}", _g(row["pipe"])]
        cells += [f"{row[f'step_ratio_{ref}']:.4f}" for ref in step_refs]
        cells += [f"**{row['loops_ratio_dp-stage stacked']:.4f}**"]
        cells += [(f"**{row[f'layers_ratio_{ref}']:.4f}**" if ref == "dp-stage stacked"
                   else f"{row[f'layers_ratio_{ref}']:.4f}") for ref in depth_refs]
        cells += ([_g(row["pipe_remat"]), f"{row['remat_extra'] / row['stack_forward_analytic']:.4f}"]
                  if "pipe_remat" in row else ["—", "—"])
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Step FLOPs/device of the unpipelined variants: "
              + ", ".join(f"{ref} {_g(V[ref]['dot_flops'])}" for ref in refs) + "."
              + ("" if not depth_refs else f" Layers ({depth}) per device: "
                 + ", ".join(f"{ref} {_g(lf[ref])}" for ref in depth_refs)
                 + f"; analytic forward + backward of unrolled layers (3 × forward): {_g(lf['analytic_saved'])}."),
              "",
              "- **The layers' FLOPs are exactly (M+P-1)/M times those of the stacked data-parallel model at every M** "
              + ("(asserted, both ways)" if depth_refs else "(asserted)") + ": each device runs its stage's loop on M+P-1 ticks of batch/M rows, where the "
              "data-parallel model runs all its layers on batch/P rows (per x-shard) once."]
    if "dp-stage" in lf:
        excess = lf["dp-stage stacked"] / lf["dp-stage"]
        lines.append(
            f"- Against the unstacked model (`stacked=False`) the layers' ratio is (M+P-1)/M × {excess:.4f}, not "
            "(M+P-1)/M: a pipeline stage is an `mi.scan` over its layers, and a scan's backward recomputes its body "
            "from the saved carries (docs/decisions.md, \"Gradients through a scan\"), so each layer costs its "
            "forward twice, less the feed-forward's second matmul, whose output the backward does not need (XLA "
            f"removes it): (3F + F − F_w2) / 3F = {excess:.4f} here. Unrolled layers save their activations instead "
            "(their layers' FLOPs are the analytic 3 × forward "
            + ("exactly" if lf["dp-stage"] == lf["analytic_saved"] else "NOT exactly") + "). That is the scan's "
            "cost, not the schedule's: the stacked model pays it too.")
    lines.append("- The whole step's ratio lies between (M+P-1)/M and P: the embedding and the tied output head run "
                 "on every stage's slot, on batch/2 rows per device, where the data-parallel model runs them on "
                 "batch/4 rows per device (P times the work, whatever M).")
    extras = [row["remat_extra"] / row["stack_forward_analytic"] for row in r["flops"] if "pipe_remat" in row]
    if extras:
        lines.append("- remat adds " + ("exactly one forward pass of the stack at every M" if set(extras) == {1.0}
                                       else "about one forward pass of the stack (see the table)")
                     + ": each tick's stage is run once more in the backward pass, from its saved input slot.")

    lines += [
        "", "## 2. Collectives along the stage axis", "",
        "From the compile report (`exe.compile_report.collectives`, records whose axes include `stage`; bytes per "
        "device × repeats). The **collective permutes** (kind `collective_permute`, a halo exchange: a shift of the slots along `stage`) "
        "move each tick's slots one stage on: M+P-2 shifts forward and their transposes backward. HLO columns: "
        "the compiled HLO's `collective-permute`s, and its all-gathers whose device groups cross the stage axis.", "",
        "| M | permutes | 2(M+P-2) | bytes each | permute bytes/device | other stage collectives | their bytes/device "
        "| HLO collective-permutes | HLO all-gathers across stage |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for M, name in zip(Ms, pipes):
        s, h = V[name]["stage"], V[name]["hlo_collectives"]
        perm = sum(e["count"] for k, e in h.items() if k.startswith("collective-permute"))
        ag_cross = h.get("all-gather (crosses stage)", {}).get("count", 0)
        lines.append(f"| {M} | {s['permutes']['count']} | {2 * (M + P - 2)} | "
                     f"{', '.join(_g(b) for b in s['permutes']['each_bytes']) or '—'} | "
                     f"{_g(s['permutes']['bytes_per_device'])} | {s['others']['count']} | "
                     f"{_g(s['others']['bytes_per_device'])} | {perm} | {ag_cross} |")
    last = pipes[-1]
    lines += ["", f"The other stage collectives at M={Ms[-1]}:", "",
              "| kind | axes | detail | operand | what | bytes/device | repeats |", "|---|---|---|---|---|---:|---:|"]
    for rec in V[last]["stage"]["others"]["records"]:
        lines.append(f"| {rec['kind']} | {','.join(rec['axes'])} | {rec['detail'] or ''} | `{rec['operand']}` | "
                     f"{what_crosses(rec)} | {_g(rec['bytes_per_device'])} | {rec['repeats']} |")
    lines += ["", "Every collective of the compiled HLO (`hlo_stats.parse_collectives`; bytes per device, a loop "
              "body once per iteration), by whether its device groups cross the stage axis:", "",
              "| variant | HLO collectives: count (bytes/device) |", "|---|---|"]
    for name in [ref for ref in refs if ref != "2d"] + pipes:
        lines.append(f"| {name} | " + "; ".join(f"{k} ×{e['count']} ({_g(e['bytes_per_device'])})"
                                              for k, e in V[name]["hlo_collectives"].items()) + " |")
    axes_cols = sorted({a for n in [*refs, *pipes] for a in V[n]["bytes_by_axes"]})
    lines += ["", "Bytes per device per step in the compile report, by the axes a collective runs over (a record in "
              "a scan body once per iteration):", "",
              "| variant | " + " | ".join(axes_cols) + " |", "|---|" + "---:|" * len(axes_cols)]
    for name in [*refs, *pipes]:
        b = V[name]["bytes_by_axes"]
        lines.append(f"| {name} | " + " | ".join(_g(b[a]) if a in b else "—" for a in axes_cols) + " |")
    lines += ["", *collective_notes(r)]

    mem_head = ["| variant | XLA temp | XLA temp, remat | remat / saved | XLA argument + output | MeshIR total | "
                "MeshIR total, remat | MeshIR activations | MeshIR activations, remat | remat: recomputations before "
                "the first backward loop |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += ["", "## 3. Memory per device", "",
              "XLA's `memory_analysis()` of the compiled step (temp; argument + output, which donation aliases) and "
              "MeshIR's estimate before XLA (`compile_report.memory`: its total and its activations category). The "
              "last column reads XLA's schedule of the remat step's loops (`loop_schedule`): how many of the ticks' "
              "recomputations run before the first tick's backward loop, i.e. in the forward phase.", "",
              *mem_head, *_memory_rows(V, ["dp-stage", *pipes])]
    if r["large_memory"]:
        big = r["large"]
        lines += ["", f"At batch {big['batch']} × length {big['length']} (compiled, not run):", "",
                  *mem_head, *_memory_rows(r["large_memory"], ["dp-stage", *pipes, *sorted(
                      n for n in r["large_memory"] if "layers" in n and not n.endswith("remat"))])]
    lines += ["", *memory_notes(r)]

    lines += ["", "## 4. Step time", ""]
    if r["timing"]:
        ratio_refs = list(next(iter(r["timing"].values()))["ratio"])
        lines += [f"{r['rounds']} interleaved rounds of {r['steps_per_round']} steps each (harness.interleaved_rounds; "
                  "each step's results fed back as the next step's state); the median of per-round medians, and the "
                  "median of per-round ratios.", "",
                  "| variant | step ms | " + " | ".join(f"/ {ref}" for ref in ratio_refs) + " |",
                  "|---|---:|" + "---:|" * len(ratio_refs)]
        for name, t in r["timing"].items():
            lines.append(f"| {name} | {harness.ms(t['median_step_s'])} | "
                         + " | ".join(f"{t['ratio'][ref]:.2f}" for ref in ratio_refs) + " |")
        lines += ["", "No target: the 8 virtual devices share 2 CPU cores, so the stages never run concurrently and "
                  "a bubble cannot show as idle time. The times show the work per device (the bubble's ticks on zeros "
                  "included) and the per-op overhead of the unrolled ticks, not a pipeline's speed."]
    lines += ["", "## 5. First-step loss", "",
              f"Every variant's loss on its first step (the same initial values, the same batch) against {refs[0]}'s "
              f"{r['losses'][refs[0]]['loss']:.7f}, asserted within rtol {RTOL:g}:", "",
              "| variant | loss | relative difference |", "|---|---:|---:|"]
    for name, rec in r["losses"].items():
        lines.append(f"| {name} | {rec['loss']:.7f} | {rec['rel_diff']:.1e} |")
    return "\n".join(lines) + "\n"


def what_crosses(rec: dict) -> str:
    """What a stage collective of the LM carries, read from its operand's dims."""
    dims = {d.split("=")[0].strip() for d in rec["operand"].split("<", 1)[-1].split(",") if "=" in d}
    if rec["kind"] == "as_partial":
        return "marks a replicated value partial over stage (moves nothing)"
    if not dims:
        return "the loss (a scalar, summed from the last stage's slot)"
    if dims == {"vocab", "d_model"}:
        return "gradient of the embedding (lookup and tied head), replicated over the stages"
    if dims == {"length", "d_model"}:
        return "gradient of the position embedding, replicated over the stages"
    if dims == {"d_model"}:
        return "gradient of the final layer norm's scale or bias, replicated over the stages"
    if dims == {"batch", "length", "d_model"}:
        return "gradient of the pipeline's input (the embedding's output, fed to stage 0, replicated over stage)"
    return ""


def collective_notes(r: dict) -> list[str]:
    """What the collective tables show, read from the numbers."""
    V, Ms = r["variants"], r["microbatches"]
    pipes = [f"pipe M={M}" for M in Ms]
    out = []
    shifts = all(V[n]["stage"]["permutes"]["count"] == 2 * (M + P - 2) for M, n in zip(Ms, pipes))
    totals = sorted({V[n]["stage"]["permutes"]["bytes_per_device"] for n in pipes})
    out.append(f"- **Permutes**: {'2(M+P-2) at every M, as the schedule needs' if shifts else 'NOT 2(M+P-2) at some M'}"
               "; each carries one microbatch's slot (batch/M rows per x-shard), so each way they move (M+P-2)/M "
               "slots' worth of the whole batch: "
               + (f"with P = 2 the same {_g(totals[0])} B per device at every M." if len(totals) == 1
                  else "per device " + ", ".join(_g(t) for t in totals) + " B."))
    inputs = [rec for rec in V[pipes[-1]]["stage"]["others"]["records"] if what_crosses(rec).startswith(
        "gradient of the pipeline's input")]
    if inputs:
        b = inputs[0]["bytes_per_device"]
        out.append(f"- Besides the permutes, the largest stage collective is the all-reduce of the pipeline input's "
                   f"gradient ({_g(b)} B per device, the embedding's output for the whole batch): the input enters "
                   "at stage 0 only, so the other stages add zeros. Its consumers (the embedding and position "
                   "gradients) are summed over the stages anyway; reducing after them would move the embedding's "
                   f"{_g(next((x['bytes_per_device'] for x in V[pipes[-1]]['stage']['others']['records'] if x['kind'] == 'all_reduce' and x['operand'].startswith('!mtf.tensor<vocab')), 0))}"
                   " B instead (an observation, not measured).")
    crossing = {M: [k for k in V[n]["hlo_collectives"] if k.startswith("all-gather") and "within" not in k]
                for M, n in zip(Ms, pipes)}
    gathers = sum(e["count"] for n in pipes for k, e in V[n]["hlo_collectives"].items() if k.startswith("all-gather"))
    if not any(crossing.values()):
        out.append(f"- **No all-gather crosses the stage axis** in the compiled HLO at any M (there are {gathers} "
                   "all-gathers in all): no stage's weights are gathered to another. What crosses the stages is the "
                   "permutes and the all-reduces of the table above.")
    else:
        out.append(f"- All-gathers crossing (or of unknown groups across) the stage axis: {crossing}.")
    x = {M: V[n]["bytes_by_axes"].get("x", 0) for M, n in zip(Ms, pipes)}
    if len(Ms) > 1:
        step = (x[Ms[-1]] - x[Ms[0]]) / (Ms[-1] - Ms[0])
        per_tick = r["stage_param_bytes"]
        dp = V["dp-stage stacked"]["bytes_by_axes"]
        out.append(
            "- **Gradient sums over x grow with M**: the compile report's bytes over x are "
            + ", ".join(f"{_g(x[M])} (M={M})" for M in Ms) + f", {_g(round(step))} B more per extra microbatch, "
            + ("exactly" if step == per_tick else "against") + f" one all-reduce over x of a stage's parameter "
            f"gradients ({_g(per_tick)} B per device). Each tick's backward loop all-reduces its stage's weight "
            "gradients over the data axis x inside the loop, so a step sends M+P-1 of them; GPipe sums the ticks' "
            "gradients first and reduces once. (The data-parallel model reduces every parameter's gradient once: "
            + ", ".join(f"{_g(b)} B over {a}" for a, b in dp.items() if "x" in a and b > 64)
            + ".) A library observation: the stage parameters' gradient traffic over the data axis is M+P-1 times "
            "what one reduction per step would send.")
    return out


def _memory_rows(V: dict, names: list[str]) -> list[str]:
    out = []
    for name in names:
        if name not in V or f"{name} remat" not in V:
            continue
        a, b = V[name]["memory"], V[f"{name} remat"]["memory"]
        xa, xb, ma, mr = a["xla"], b["xla"], a["meshir"], b["meshir"]
        out.append(f"| {name} | {harness.fmt_bytes(xa['temp'])} | {harness.fmt_bytes(xb['temp'])} | "
                   f"{xb['temp'] / xa['temp']:.3f} | {harness.fmt_bytes(xa['argument'] + xa['output'])} | "
                   f"{harness.fmt_bytes(ma['total'])} | {harness.fmt_bytes(mr['total'])} | "
                   f"{harness.fmt_bytes(ma['categories'].get('activations'))} | "
                   f"{harness.fmt_bytes(mr['categories'].get('activations'))} | {early_recomputes(V[f'{name} remat'])} |")
    return out


def early_recomputes(rec: dict) -> str:
    """'k of n': the recomputation loops (R) XLA schedules before the first backward loop (B)."""
    schedule = rec.get("loop_schedule")
    if not schedule:
        return "—"
    kinds = schedule.split()
    first_b = kinds.index("B") if "B" in kinds else len(kinds)
    return f"{kinds[:first_b].count('R')} of {kinds.count('R')}"


def memory_notes(r: dict) -> list[str]:
    """What the memory tables show, read from the numbers."""
    out = []
    for label, V in (("this size", r["variants"]), ("the larger size", r["large_memory"])):
        names = [n for n in V if n.startswith("pipe") and not n.endswith("remat") and f"{n} remat" in V]
        if not names:
            continue
        xla = {n: V[f"{n} remat"]["memory"]["xla"]["temp"] / V[n]["memory"]["xla"]["temp"] for n in names}
        lo, hi = min(xla.values()), max(xla.values())
        verdict = ("saves temp memory everywhere" if hi < 0.97 else "saves nothing measurable" if lo > 0.97 and hi < 1.03
                   else "does not save temp memory everywhere")
        out.append(f"- At {label}, the pipeline's remat {verdict} in XLA's temp bytes (remat / saved: "
                   + ", ".join(f"{xla[n]:.3f} at {n[5:]}" for n in names) + ").")
        if "dp-stage remat" in V:
            d = V["dp-stage remat"]["memory"]["xla"]["temp"] / V["dp-stage"]["memory"]["xla"]["temp"]
            first = not any(line.startswith("  The unpipelined") for line in out)
            out.append(f"  The unpipelined model's per-layer remat does: {d:.3f}× its temp bytes."
                       + (" Its unrolled layers save every layer's internals (the attention probabilities above all); a "
                          "pipeline stage is an `mi.scan`, whose backward already recomputes each layer from its input "
                          "carry, so what remat could still drop is only those carries, one slot per layer of a stage "
                          "per tick." if first else ""))
    large = r["large_memory"]
    remats = [n for n in large if n.startswith("pipe") and n.endswith("remat")]
    early = [early_recomputes(large[n]) for n in remats]
    if remats and all(e.split(" of ")[0] == e.split(" of ")[1] for e in early):
        out.append(
            "- Why not even those carries: in XLA's schedule every tick's recomputation runs in the forward phase, "
            "right after that tick's forward loop (all of them before the first backward loop, last column), so the "
            "carries it recomputes are all live when the backward starts, as the saved ones are without remat. "
            "mi.remat makes a recomputation wait for its result's cotangent (`_after` in "
            "transforms/autodiff/calls.py, docs/decisions.md: \"Remat's recomputation must survive XLA\") only for "
            "an input without a written layout; the stage's input slot has one (the pipeline's "
            "`shard(moved, {stage: axis})`), so it gets the optimization barrier alone, which XLA:CPU expands before "
            "scheduling (read from the code and the StableHLO, where the barrier's result feeds the recomputing "
            "loop directly).")
    deep = [n for n in large if "layers" in n and not n.endswith("remat")]
    if deep and f"{deep[0]} remat" in large:
        n16 = deep[0]
        M = int(n16.split("M=")[1].split(",")[0])
        n4 = f"pipe M={M}"
        layers = (large[n4].get("layers"), large[n16]["layers"])
        if n4 in large and None not in layers:
            layer_params = r["stage_param_bytes"] // (r["config"]["layers"] // P)
            per_layer = {k: (large[f"{n16}{k}"]["memory"]["xla"]["temp"] - large[f"{n4}{k}"]["memory"]["xla"]["temp"])
                         / ((layers[1] - layers[0]) // P) for k in ("", " remat")}
            out.append(
                f"- More layers per stage do not change it: at M={M}, {layers[0] // P} → {layers[1] // P} layers per "
                f"stage add {harness.fmt_bytes(round(per_layer['']))} of temp per layer of a stage without remat and "
                f"{harness.fmt_bytes(round(per_layer[' remat']))} with it, where dropping a layer's carries would save "
                f"one slot per tick, {M + P - 1} slots of "
                f"{harness.fmt_bytes(r['large']['batch'] // M // 2 * r['large']['length'] * r['config']['d_model'] * 4)}"
                " each. What grows with the stage's depth is mostly not its carries: one stage layer's parameters "
                f"are {harness.fmt_bytes(layer_params)} per device, so the growth is {per_layer[''] / layer_params:.0f} "
                "copies of them per layer (per-tick copies of the stage's parameters in its loops' state, or of their "
                "gradients, by the size; not traced further).")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny layers, M in (1, 2), one round; results/quick/")
    parser.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3, help="steps per variant per round")
    args = parser.parse_args(argv)
    harness.ensure_devices(8)
    rounds, steps, warmup = (1, 1, 0) if args.quick else (args.rounds, args.steps, 1)
    began = time.perf_counter()
    record = measure("quick" if args.quick else "default", rounds, steps, warmup)
    record["wall_s"] = time.perf_counter() - began
    meta = harness.machine()
    text = markdown(meta, record)
    harness.write_report(harness.results_dir(args.out, args.quick), "pipeline", {"meta": meta, **record}, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
