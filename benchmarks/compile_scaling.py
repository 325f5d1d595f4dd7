"""How MeshIR's compile time scales: passes + lowering (no XLA, no devices) for meshes of 8 to
4096 devices and for 1 to 48 stacked Transformer layers.

    python benchmarks/compile_scaling.py [--quick] [--out benchmarks/results]

Each point builds the program, then times mtf-propagate-sharding, mtf-insert-collectives and
mtf-lower-to-stablehlo (explicit mode; gspmd-mode lowering of the propagated module is timed
too when it is available), keeping the fastest of `--repeats` runs. Layout: 2-D, `batch:x,
heads:y, d_ff:y`. Writes compile_scaling.md, compile_scaling.json and compile_scaling.png.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from cases import LAYOUTS, build_transformer

#: Meshes by device count: 2-D, axes large enough for the dims below to divide.
MESHES = {8: {"x": 4, "y": 2}, 64: {"x": 8, "y": 8}, 512: {"x": 32, "y": 16}, 4096: {"x": 64, "y": 64}}
#: Dims divisible by every mesh axis above (64 at most).
SIZES = dict(batch=128, seq=128, d_model=1024, heads=64, d_k=64, d_ff=4096)
LAYERS = (1, 2, 4, 8, 16, 32, 48)
PHASES = ("propagate", "insert_collectives", "lower_explicit")


def time_passes(mesh_axes: dict, layers: int, repeats: int = 3) -> dict:
    """Fastest of `repeats` runs, per phase (and their sum, `passes`), for one program on one
    mesh, in CPU seconds of this process (`time.process_time`: the passes are single-threaded
    Python, and on a shared machine wall time mostly measures the other processes); the
    wall time of the passes is kept as `passes_wall`. The three passes run as `mi.compile`
    runs them: one pipeline, verified before the first pass and after each (a phase includes
    the checks after its pass; the first, the input's verification), collectives recording
    their provenance (`explain=true`)."""
    import meshir as mi
    from meshir.dialect import get_context
    from meshir.dialect.layout_rules import LayoutRules
    from meshir.dialect.modes import EXPLICIT, GSPMD
    from meshir.transforms import Pipeline
    from meshir.transforms.passes.insert_collectives import InsertCollectivesPass
    from meshir.transforms.passes.lower_to_stablehlo import LowerToStableHLOPass
    from meshir.transforms.passes.propagate_sharding import PropagateShardingPass

    samples = {p: [] for p in PHASES + ("lower_gspmd", "build", "passes_wall")}
    clock = time.process_time
    gspmd_note = None
    marks = _Marks(clock, PropagateShardingPass.NAME)
    pipeline = Pipeline([PropagateShardingPass(rules=LayoutRules.of(LAYOUTS["2d"])), InsertCollectivesPass(explain=True),
                         LowerToStableHLOPass(mode=EXPLICIT)], after_each=marks)
    for _ in range(repeats):
        start = clock()
        prog = build_transformer(mi, mi.Mesh(mesh_axes), SIZES, layers)
        marks.reset()
        t0, wall = clock(), time.perf_counter()
        with get_context():
            module = prog.module.operation.clone()  # as mi.compile does
        pipeline.apply(module)
        samples["passes_wall"].append(time.perf_counter() - wall - marks.clone_wall)
        samples["build"].append(t0 - start)
        samples["propagate"].append(marks.ends[0] - t0)
        samples["insert_collectives"].append(marks.ends[1] - marks.ends[0] - marks.clone_cpu)
        samples["lower_explicit"].append(marks.ends[2] - marks.ends[1])
        if gspmd_note is None:
            try:
                t5 = clock()
                Pipeline([LowerToStableHLOPass(mode=GSPMD)]).apply(marks.propagated, verify_input=False)
                samples["lower_gspmd"].append(clock() - t5)
            except mi.MeshIRError as e:
                gspmd_note = str(e).splitlines()[0]
    out = {p: min(v) for p, v in samples.items() if v}
    out["passes"] = sum(out[p] for p in PHASES)
    out["devices"] = int(mi.Mesh(mesh_axes).size)
    out["mesh"] = dict(mesh_axes)
    out["layers"] = layers
    if gspmd_note:
        out["lower_gspmd_note"] = gspmd_note
    return out


class _Marks:
    """The pipeline's after-each hook: when each phase ended, and a copy of the propagated
    module (for the gspmd lowering) whose cost is not counted."""

    def __init__(self, clock, keep_after: str):
        self.clock, self.keep_after = clock, keep_after
        self.reset()

    def reset(self) -> None:
        self.ends, self.propagated, self.clone_cpu, self.clone_wall = [], None, 0.0, 0.0

    def __call__(self, label: str, op) -> None:
        cpu, wall = self.clock(), time.perf_counter()
        self.ends.append(cpu)
        if label == self.keep_after:
            self.propagated = op.clone()
            self.clone_cpu, self.clone_wall = self.clock() - cpu, time.perf_counter() - wall


def run(quick: bool = False, repeats: int | None = None, device_layers: int = 4, log=print) -> dict:
    repeats = repeats or (1 if quick else 5)
    layers = LAYERS[:3] if quick else LAYERS
    meshes = dict(list(MESHES.items())[:2]) if quick else MESHES
    time_passes(meshes[min(meshes)], 1, 1)  # warm-up: imports, pass registry, MLIR context
    by_devices = []
    for n, axes in meshes.items():
        by_devices.append(time_passes(axes, device_layers, repeats))
        log(f"  compile scaling: {n:5d} devices, {device_layers} layers: {by_devices[-1]['passes'] * 1e3:8.1f} ms")
    by_layers = {}
    for n in (min(meshes), max(meshes)):
        by_layers[n] = []
        for count in layers:
            by_layers[n].append(time_passes(meshes[n], count, max(1, repeats // 2) if count >= 16 else repeats))
            log(f"  compile scaling: {n:5d} devices, {count:2d} layers: {by_layers[n][-1]['passes'] * 1e3:8.1f} ms")
    return {"sizes": SIZES, "layout": LAYOUTS["2d"], "repeats": repeats, "device_sweep_layers": device_layers,
            "by_devices": by_devices, "by_layers": {str(k): v for k, v in by_layers.items()}}


def _ms(v) -> str:
    return "n/a" if v is None else f"{v * 1e3:.1f}"


def markdown(data: dict) -> str:
    has_gspmd = any("lower_gspmd" in r for r in data["by_devices"])
    head = ["devices", "mesh", "propagate (ms)", "insert collectives (ms)", "lower explicit (ms)",
            "passes total (ms)", "vs 8 devices"] + (["lower gspmd (ms)"] if has_gspmd else [])
    lines = [
        "# MeshIR compile scaling (passes + lowering, no XLA)",
        "",
        f"Transformer layers (pre-LN attention + FFN), 2-D layout `batch:x, heads:y, d_ff:y`, sizes {data['sizes']}; "
        f"fastest of {data['repeats']} runs ({max(1, data['repeats'] // 2)} for 16+ layers). Times are CPU time of MeshIR's Python passes on the "
        "`mtf` module (`time.process_time`, robust to other processes on a shared machine; wall time is in the "
        "JSON as `passes_wall`); XLA compilation is not included.",
        "",
        f"## Number of devices ({data['device_sweep_layers']} layers)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    base = data["by_devices"][0]["passes"]
    for r in data["by_devices"]:
        mesh = "x".join(str(v) for v in r["mesh"].values())
        row = [str(r["devices"]), mesh, _ms(r["propagate"]), _ms(r["insert_collectives"]), _ms(r["lower_explicit"]),
               _ms(r["passes"]), f"{r['passes'] / base:.2f}x"]
        if has_gspmd:
            row.append(_ms(r.get("lower_gspmd")))
        lines.append("| " + " | ".join(row) + " |")
    for n, rows in data["by_layers"].items():
        lines += ["", f"## Number of layers ({n} devices)", "",
                  "| layers | propagate (ms) | insert collectives (ms) | lower explicit (ms) | passes total (ms) "
                  "| per layer (ms) |",
                  "|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['layers']} | {_ms(r['propagate'])} | {_ms(r['insert_collectives'])} | "
                         f"{_ms(r['lower_explicit'])} | {_ms(r['passes'])} | {_ms(r['passes'] / r['layers'])} |")
    return "\n".join(lines) + "\n"


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    rows = data["by_devices"]
    devices = [r["devices"] for r in rows]
    bottom = [0.0] * len(rows)
    for phase, color in zip(PHASES, ("#4c72b0", "#dd8452", "#55a868")):
        values = [r[phase] * 1e3 for r in rows]
        left.bar([str(d) for d in devices], values, bottom=bottom, color=color, label=phase.replace("_", " "))
        bottom = [b + v for b, v in zip(bottom, values)]
    if any("lower_gspmd" in r for r in rows):
        left.plot([str(d) for d in devices], [r.get("lower_gspmd", float("nan")) * 1e3 for r in rows], "k--o",
                  label="lower gspmd (alone)")
    left.set_ylim(0, max(bottom) * 1.4)  # room for the legend
    left.set_xlabel("devices in the mesh")
    left.set_ylabel("time (ms)")
    left.set_title(f"MeshIR passes, {data['device_sweep_layers']} Transformer layers")
    left.legend(fontsize=8, ncols=2, loc="upper center")
    for n, rows in data["by_layers"].items():
        layers = [r["layers"] for r in rows]
        right.plot(layers, [r["passes"] for r in rows], "o-", label=f"{n} devices")
    right.set_xlabel("Transformer layers in the program")
    right.set_ylabel("passes + lowering (s)")
    right.set_title("MeshIR passes vs program size")
    right.grid(alpha=0.3)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 meshes, 1-4 layers, 1 run each")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = parser.parse_args(argv)
    data = run(args.quick, args.repeats)
    write(data, Path(args.out))
    return 0


def write(data: dict, out: Path) -> dict:
    harness.write_report(out, "compile_scaling", data, markdown(data))
    written = {"md": out / "compile_scaling.md", "json": out / "compile_scaling.json"}
    try:
        plot(data, out / "compile_scaling.png")
        written["png"] = out / "compile_scaling.png"
    except ImportError:
        print("  (no plot: matplotlib is not installed; pip install -e '.[viz]')")
    return written


if __name__ == "__main__":
    raise SystemExit(main())
