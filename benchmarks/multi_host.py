"""The LM training step on 1 process x 8 CPU devices vs 2 processes x 4 (jax.distributed).

    python benchmarks/multi_host.py            # README size
    python benchmarks/multi_host.py --quick    # tiny size, few steps (results/quick/)

The step of benchmarks/lm_step.py (examples/lm `model.train_step`, layout "2d" =
`batch:x; heads, d_ff, vocab:y` on the 4x2 mesh, `mi.compile(donate=True)`), the same
initial parameters and the same fixed-seed NumPy batches, run two ways, each in fresh
processes started by this script in its worker mode: (a) one process with 8 devices, (b) two
processes with 4 devices each (`mi.distributed.launch_local`; gloo collectives over localhost
TCP), each feeding its own rows of every batch with `mi.process_local(..., along="batch")`.
Mesh axis x spans the two processes, y stays inside one. Rounds alternate which way goes
first. Both ways must compute the same losses (rtol 1e-5), from the same compiled program.

On a machine with fewer cores than devices (the 2-core CI machine) the ratio measures the
cost of the process boundary, not a speed-up: the two processes share the same cores.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))

import numpy as np  # noqa: E402

import harness  # noqa: E402
from meshir.lowering.runtime import hlo_collectives as hlo_stats  # noqa: E402
import lm_step  # noqa: E402

RTOL = 1e-5
WAYS = {"1x8": (1, 8), "2x4": (2, 4)}  # name -> (processes, devices per process)
PROBE_SHAPE = (8, 256)  # a latency probe: one f32 all-reduce of 8x256 / axis size per device


# ------------------------------------------------------------------------------------------
# The worker: one process of one way


def worker(size: dict, steps: int, warmup: int, out: Path) -> None:
    import meshir as mi

    processes = int(os.environ.get("MESHIR_NUM_PROCESSES", 1))
    if processes > 1:
        mi.distributed.initialize(local_devices=8 // processes, timeout=120, heartbeat_timeout=30)
    else:
        harness.ensure_devices(8)
    import jax

    from lm import model

    cfg = model.Config(**size)
    mesh, rules = model.layout(lm_step.DEFAULT_LAYOUT)
    began = time.perf_counter()
    step_prog = model.train_step(cfg, mesh)
    exe = mi.compile(step_prog, layout=rules, donate=True)
    compile_s = {"wall": time.perf_counter() - began, **exe.compile_times}
    names = step_prog.program.result_names
    state = {**model.init_params(cfg), **mi.init_optimizer_state(step_prog)}
    rows = {n: my_rows(exe, n, (cfg.batch, cfg.length)) for n in ("tokens", "targets")}
    data = lm_step.batches(cfg)
    losses, times = [], []
    for t in range(1, warmup + steps + 1):
        tokens, targets = next(data)
        out_, seconds = harness.timed(lambda: exe(
            tokens=mi.process_local(tokens[rows["tokens"]], along="batch"),
            targets=mi.process_local(targets[rows["targets"]], along="batch"), **state, step=np.float32(t)))
        times.append(seconds)
        results = dict(zip(names, out_))
        state = {n: results[n] for n in state}
        losses.append(float(np.asarray(results["loss"])))
    hlo = exe.compiled_hlo_text()
    record = {"process": jax.process_index(), "processes": jax.process_count(), "devices": jax.device_count(),
              "local_devices": jax.local_device_count(), "compile_s": compile_s, "losses": losses,
              "step_s": times[warmup:], "step_median_s": statistics.median(times[warmup:]),
              "probe_s": probe(mi, jax, mesh), "collectives": collectives_by_axis(hlo, mesh, 8 // processes),
              "hlo_lines": hlo.splitlines()}
    if jax.process_count() > 1:
        record["describe"] = mi.distributed.describe(mesh)
    (out / f"p{jax.process_index()}.json").write_text(json.dumps(record))


def my_rows(exe, arg: str, shape: tuple) -> slice:
    """The rows of the global batch argument `arg` that this process's devices hold."""
    sharding = exe.in_shardings[exe.signature.arg_names.index(arg)]
    index = [i[0] for i in sharding.addressable_devices_indices_map(shape).values()]
    return slice(min(i.start or 0 for i in index), max(shape[0] if i.stop is None else i.stop for i in index))


def probe(mi, jax, mesh, reps: int = 30) -> dict:
    """Median seconds of one small all-reduce over each mesh axis, its input already on the devices."""
    k, m = mi.Dim("k", PROBE_SHAPE[0]), mi.Dim("m", PROBE_SHAPE[1])
    out = {}
    for axis in mesh.axis_names:
        with mi.Program(f"probe_{axis}", mesh) as prog:
            t = prog.argument("t", [k, m])
            prog.result(mi.reduce_sum(mi.all_slice(t, "k", axis), over=["k"]), name="s")
        exe = mi.compile(prog)
        arg = jax.device_put(np.ones(PROBE_SHAPE, np.float32), exe.in_shardings[0])
        timed = harness.time_calls({axis: lambda: exe(t=arg)}, reps, warmup=3)
        out[f"all-reduce over {axis}"] = timed[axis]["median_s"]
    return out


def collectives_by_axis(hlo: str, mesh, local_devices: int) -> dict:
    """{"<kind> over <axes>": instructions, operands, bytes per device, whether it crosses
    processes} from the compiled HLO. Partition p is device p; a process holds `local_devices`
    consecutive devices."""
    shape = [size for _, size in mesh.axes]
    rows = {}
    for c in hlo_stats.parse_collectives(hlo):
        coords = [np.unravel_index(g, shape) for g in c.groups or []]
        axes = ",".join(a for i, a in enumerate(mesh.axis_names) if any(len(set(x[i])) > 1 for x in coords)) or "-"
        crosses = any(len({d // local_devices for d in g}) > 1 for g in c.groups or [])
        row = rows.setdefault(f"{c.kind} over {axes}", {"count": 0, "operands": 0, "bytes_per_device": 0,
                                                         "crosses": crosses})
        row["count"] += 1
        row["operands"] += len(c.operand_shapes)
        row["bytes_per_device"] += c.bytes_per_device
    return rows


def hlo_differences(runs: dict) -> dict:
    """How the compiled HLO of every process of every run differs from the first 1x8 run's:
    lines that differ, and those of them that differ outside `backend_config` (XLA:CPU's
    choices for the host, e.g. how many tasks run a loop fusion). Pops the texts."""
    texts = [rec.pop("hlo_lines") for way_runs in runs.values() for recs in way_runs for rec in recs]
    want = texts[0]
    lines = outside = 0
    for text in texts:
        if len(text) != len(want):
            return {"lines": max(len(text), len(want)), "outside_backend_config": max(len(text), len(want))}
        diff = [(a, b) for a, b in zip(text, want) if a != b]
        lines = max(lines, len(diff))
        outside = max(outside, sum(_CONFIG.sub("", a) != _CONFIG.sub("", b) for a, b in diff))
    return {"lines": lines, "outside_backend_config": outside}


_CONFIG = re.compile(r",? backend_config=.*$")


# ------------------------------------------------------------------------------------------
# The parent: rounds of both ways


def run_way(way: str, size: dict, steps: int, warmup: int, folder: Path) -> list[dict]:
    """One run of `way` in fresh processes: each process's record, in process order."""
    processes, local = WAYS[way]
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(size), "--steps", str(steps),
               "--warmup", str(warmup), "--out", str(folder)]
    if processes == 1:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MESHIR_")}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        failed = [(0, done.returncode, done.stdout + done.stderr)] if done.returncode else []
    else:
        results = mi_distributed().launch_local(command, processes, local, capture=True, timeout=600)
        failed = [(r.process_id, r.returncode, r.output) for r in results if r.returncode]
    if failed:
        raise RuntimeError("\n".join(f"{way}, process {p} exited {rc}:\n{text[-3000:]}" for p, rc, text in failed))
    return [json.loads((folder / f"p{p}.json").read_text()) for p in range(processes)]


def mi_distributed():
    import meshir as mi

    return mi.distributed


def measure_size(name: str, size: dict, rounds: int, steps: int, warmup: int, scratch: Path) -> dict:
    runs = {way: [] for way in WAYS}
    ratios = []
    for r in harness.progress(range(rounds), f"{name} rounds", unit="round"):
        for way in harness.round_order(WAYS, r):
            runs[way].append(run_way(way, size, steps, warmup, scratch / f"{name}-{way}-{r}"))
        ratios.append(runs["2x4"][-1][0]["step_median_s"] / runs["1x8"][-1][0]["step_median_s"])
        harness.write(f"  round {r + 1}: 1x8 {harness.ms(runs['1x8'][-1][0]['step_median_s'])} ms, "
                      f"2x4 {harness.ms(runs['2x4'][-1][0]['step_median_s'])} ms: {ratios[-1]:.2f}x")
    # The same losses: every run, every process, equal to the first 1x8 run's (rtol 1e-5)
    want = np.array(runs["1x8"][0][0]["losses"])
    for way, way_runs in runs.items():
        for recs in way_runs:
            for rec in recs:
                np.testing.assert_allclose(rec["losses"], want, rtol=RTOL,
                                           err_msg=f"{name}: {way} process {rec['process']} vs 1x8")
    worst = max(float(np.max(np.abs(np.array(rec["losses"]) - want) / np.abs(want)))
                for recs in runs["2x4"] for rec in recs)
    first = {way: way_runs[0][0] for way, way_runs in runs.items()}
    median = {way: statistics.median(recs[0]["step_median_s"] for recs in way_runs) for way, way_runs in runs.items()}
    probe_s = {way: {k: statistics.median(recs[0]["probe_s"][k] for recs in way_runs) for k in first[way]["probe_s"]}
               for way, way_runs in runs.items()}
    return {
        "size": name, "text": lm_step.SIZE_TEXT.get(name, name), "config": size, "rounds": rounds, "steps": steps,
        "warmup": warmup, "losses": first["1x8"]["losses"], "max_loss_rel_diff_2x4": worst,
        "step_median_s": median, "ratio_median": statistics.median(ratios), "ratios": ratios,
        "process_1_step_median_s": statistics.median(recs[1]["step_median_s"] for recs in runs["2x4"]),
        "compile_s": {way: statistics.median(recs[0]["compile_s"]["wall"] for recs in way_runs)
                      for way, way_runs in runs.items()},
        "compile_parts_s": {way: first[way]["compile_s"] for way in WAYS},
        "collectives": {way: first[way]["collectives"] for way in WAYS},
        "hlo_differences": hlo_differences(runs),
        "probe_s": probe_s, "describe": first["2x4"].get("describe", ""),
    }


# ------------------------------------------------------------------------------------------
# The report


def extra_estimate(r: dict) -> dict:
    """Seconds per step the collectives add in 2x4: per row, its operands (XLA's CPU runtime
    runs one collective per operand of a combined all-reduce) times the probe's extra latency
    (2x4 - 1x8): the probe over x for a row that crosses processes, over y else."""
    out = {}
    for key, row in r["collectives"]["2x4"].items():
        probe_key = "all-reduce over x" if row["crosses"] else "all-reduce over y"
        out[key] = row["operands"] * (r["probe_s"]["2x4"][probe_key] - r["probe_s"]["1x8"][probe_key])
    out["total"] = sum(out.values())
    return out


def same_program(d: dict) -> str:
    if d["outside_backend_config"]:
        return f"**The compiled HLO differs** between runs or processes ({d['outside_backend_config']} lines)."
    if d["lines"]:
        return (f"The same program both ways: the compiled HLO of every process of every run is identical but for "
                f"{d['lines']} lines' `backend_config` (XLA:CPU's `outer_dimension_partitions`, how many tasks run a "
                "loop fusion, chosen for the devices of one process).")
    return "The same program both ways: the compiled HLO of every process of every run is identical."


def markdown(meta: dict, records: list[dict]) -> str:
    ms = harness.ms
    lines = [
        "# The LM training step: 1 process × 8 devices vs 2 processes × 4 devices",
        "",
        f"Generated by `python benchmarks/multi_host.py{' --quick' if meta['quick'] else ''}` on {meta['date']} "
        f"({meta['platform']}, {meta['cpus']} CPUs, jax {meta['jax']}; 4x2 mesh, layout `batch:x; heads, d_ff, "
        "vocab:y`, Adam, parameters and state donated). 1×8: one process with 8 CPU devices. 2×4: two processes "
        "of 4 CPU devices on localhost (`mi.distributed.launch_local`, jax.distributed with gloo collectives over "
        "TCP), each feeding its own rows of the batch (`mi.process_local(..., along=\"batch\")`); mesh axis x "
        "spans the two processes, y stays inside each.",
        "",
        f"**On this {meta['cpus']}-core machine the ratio measures the cost of the process boundary, not a "
        "speed-up:** both ways run 8 devices' work on the same cores; 2×4 adds gloo collectives over localhost "
        "TCP where 1×8 synchronizes threads in one process, and two Python processes (each with its own XLA "
        "thread pool) share the cores.",
        "",
        f"Each round runs both ways in fresh processes (the order alternates per round): compile, {meta['warmup']} "
        f"untimed warm-up steps, then {meta['steps']} timed steps as a user runs them (a fresh fixed-seed NumPy "
        "batch, the results fed back donated, every result blocked on); a way's step time is process 0's median "
        f"step, the table gives the median over {meta['rounds']} rounds, and the ratio is the median of the "
        "per-round ratios 2×4 / 1×8. The losses of every step, every run and both processes equal the 1×8 "
        "losses within rtol 1e-5 (asserted).",
        "",
    ]
    if meta.get("note"):
        lines += [meta["note"], ""]
    lines += ["| size | 2×4 / 1×8 step time | 1×8 ms | 2×4 ms | per-round ratios | losses (first, last) | "
              "max loss rel. diff | compile 1×8 / 2×4 (s) |", "|---|---|---|---|---|---|---|---|"]
    for r in records:
        st, c = r["step_median_s"], r["compile_s"]
        lines.append(f"| {r['text']} | **{r['ratio_median']:.2f}×** | {ms(st['1x8'])} | {ms(st['2x4'])} | "
                     f"{', '.join(f'{x:.2f}' for x in r['ratios'])} | {r['losses'][0]:.5f}, {r['losses'][-1]:.5f} "
                     f"(equal) | {r['max_loss_rel_diff_2x4']:.1e} | {c['1x8']:.2f} / {c['2x4']:.2f} |")
    for r in records:
        lines += ["", f"## {r['text']}: collectives per step (compiled HLO, bytes per device)", "",
                  same_program(r["hlo_differences"]), "",
                  "| collective | instructions | operands | bytes/device 1×8 | bytes/device 2×4 | crosses the process "
                  "boundary |", "|---|---|---|---|---|---|"]
        for key, row in r["collectives"]["2x4"].items():
            one = r["collectives"]["1x8"].get(key, {"bytes_per_device": 0})
            lines.append(f"| {key} | {row['count']} | {row['operands']} | {one['bytes_per_device']:,} | "
                         f"{row['bytes_per_device']:,} | "
                         f"{'yes' if row['crosses'] else 'no'} |")
        p, extra = r["probe_s"], extra_estimate(r)
        probe_rows = [f"| {k} | {ms(p['1x8'][k])} | {ms(p['2x4'][k])} |" for k in p["1x8"]]
        lines += ["", "Where the extra time goes: one small all-reduce (f32 "
                  f"{PROBE_SHAPE[0]}×{PROBE_SHAPE[1]} split over the axis, input already on the devices) per axis, "
                  "median ms per call:", "", "| probe | 1×8 | 2×4 |", "|---|---|---|", *probe_rows, "",
                  "In 2×4 every collective goes through gloo, also those inside one process (over y), and a combined "
                  "all-reduce costs about one gloo all-reduce per operand. The step's operands times the probe's "
                  f"extra latency per call (over x where the row crosses processes, over y else): {ms(extra['total'])} "
                  f"ms of the {ms(r['step_median_s']['2x4'] - r['step_median_s']['1x8'])} ms extra per step "
                  f"({', '.join(f'{k}: {ms(v)}' for k, v in extra.items() if k != 'total')})."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny size, few steps; writes under results/quick/")
    p.add_argument("--sizes", help="comma-separated sizes of benchmarks/lm_step.py (default: readme; --quick tiny)")
    p.add_argument("--rounds", type=int, help="rounds of both ways (default: 5; --quick 1)")
    p.add_argument("--steps", type=int, help="timed steps per run (default: 20; --quick 3)")
    p.add_argument("--warmup", type=int, help="untimed steps per run (default: 3; --quick 1)")
    p.add_argument("--note", default="", help="a line for the report (e.g. the machine's load)")
    p.add_argument("--out", help="output folder (default: benchmarks/results, --quick: benchmarks/results/quick)")
    p.add_argument("--worker", metavar="CONFIG_JSON", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    steps = args.steps or (3 if args.quick else 20)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    out = harness.results_dir(args.out, args.quick)
    if args.worker:
        worker(json.loads(args.worker), steps, warmup, out)
        return 0
    table = lm_step.QUICK_SIZES if args.quick else lm_step.SIZES
    chosen = harness.chosen_sizes(p, args.sizes, table, default=["tiny" if args.quick else "readme"])
    rounds = args.rounds or (1 if args.quick else 5)
    records = []
    for name in chosen:
        print(f"{name}: {lm_step.SIZE_TEXT.get(name, name)}", flush=True)
        with tempfile.TemporaryDirectory() as scratch:
            rec = measure_size(name, table[name], rounds, steps, warmup, Path(scratch))
        print(f"  2x4 / 1x8 {rec['ratio_median']:.2f}x; losses equal (max rel. diff "
              f"{rec['max_loss_rel_diff_2x4']:.1e}); HLO lines differing: {rec['hlo_differences']}", flush=True)
        records.append(rec)
    meta = {**harness.machine(), "quick": args.quick, "rounds": rounds, "steps": steps, "warmup": warmup,
            "note": args.note}
    harness.write_report(out, "multi_host", {"meta": meta, "sizes": records}, markdown(meta, records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
