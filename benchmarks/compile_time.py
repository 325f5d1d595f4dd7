"""Compile time of the LM training step: MeshIR's passes plus XLA vs jax.jit's lower plus compile.

    python benchmarks/compile_time.py            # the sizes of benchmarks/lm_step.py, 4x2 layout
    python benchmarks/compile_time.py --quick    # tiny sizes (results/quick/)

The programs are benchmarks/lm_step.py's: examples/lm `model.train_step` under
`mi.compile(layout=..., donate=True)` and the same model in plain JAX under `jax.jit` with the
same shardings and donation. One process; both sides compile a tiny step first so neither pays
the backend's start-up, then each size is compiled `--reps` times per side in alternating
order (MeshIR first on even repetitions), every time from scratch (jax's caches cleared, a
fresh step function). Reported per size: the median of the per-repetition ratios MeshIR / jax
(target: ≤ 1.1×), the median times, MeshIR's split into passes and XLA and jax's into lowering
and XLA, and the StableHLO op counts each side hands XLA.
"""
from __future__ import annotations

import argparse
import collections
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import lm_step  # noqa: E402  (sets sys.path for examples/ and JAX_PLATFORMS)
import measure  # noqa: E402

import numpy as np  # noqa: E402

TARGET = 1.1
_OP = re.compile(r"(?:=|^)\s*\"?([a-z_]+\.[a-z_.]+)\"?[ (<{]", re.M)


def op_counts(text: str) -> dict:
    """StableHLO/sdy/func op names in module text with how often each occurs."""
    return dict(collections.Counter(m.group(1) for m in _OP.finditer(text)).most_common())


def compile_meshir(cfg, layout: str):
    """(Executable, wall seconds) of `mi.compile` of the training step, donated."""
    import meshir as mi
    from lm import model

    mesh, rules = model.layout(layout)
    return harness.timed(lambda: mi.compile(model.train_step(cfg, mesh), layout=rules, donate=True))


def compile_jax(cfg, layout: str, state_names):
    """(jax Lowered, Compiled, lower seconds, compile seconds) of the same step under jax.jit."""
    import jax

    from lm import model

    mesh, rules = model.layout(layout)
    init = model.init_params(cfg)
    fn, state_sh, tok_sh, repl = lm_step.jax_side(cfg, dict(mesh.shape), rules, state_names)
    state = {n: jax.ShapeDtypeStruct(init[n.split("__")[0]].shape, np.float32, sharding=state_sh[n])
             for n in state_names}
    tokens = jax.ShapeDtypeStruct((cfg.batch, cfg.length), np.int32, sharding=tok_sh)
    step = jax.ShapeDtypeStruct((), np.float32, sharding=repl)
    jitted = jax.jit(fn, donate_argnums=(0,), in_shardings=(state_sh, tok_sh, tok_sh, repl),
                     out_shardings=(repl, state_sh))
    lowered, lower_s = harness.timed(lambda: jitted.lower(state, tokens, tokens, step))
    compiled, compile_s = harness.timed(lowered.compile)
    return lowered, compiled, lower_s, compile_s


def run_size(name: str, fields: dict, layout: str, reps: int, say=harness.write) -> dict:
    import jax

    from lm import model

    cfg = model.Config(**fields)
    cfg.check()
    times = {"meshir": [], "meshir_passes": [], "meshir_xla": [], "jax": [], "jax_lower": [], "jax_xla": []}
    exe = lowered = compiled = None
    for r in harness.progress(range(reps), f"{name} compiles", unit="rep"):
        for side in harness.round_order(("meshir", "jax"), r):
            jax.clear_caches()
            if side == "meshir":
                exe, wall = compile_meshir(cfg, layout)
                times["meshir"].append(exe.compile_times["meshir_passes_s"] + exe.compile_times["xla_compile_s"])
                times["meshir_passes"].append(exe.compile_times["meshir_passes_s"])
                times["meshir_xla"].append(exe.compile_times["xla_compile_s"])
            else:
                names = [n for n in exe.signature.result_names if n != "loss"] if exe else None
                if names is None:
                    exe, _ = compile_meshir(cfg, layout)
                    names = [n for n in exe.signature.result_names if n != "loss"]
                lowered, compiled, lower_s, xla_s = compile_jax(cfg, layout, names)
                times["jax"].append(lower_s + xla_s)
                times["jax_lower"].append(lower_s)
                times["jax_xla"].append(xla_s)
        say(f"  rep {r}: MeshIR {times['meshir'][-1]:.2f} s (passes {times['meshir_passes'][-1]:.2f}, "
            f"XLA {times['meshir_xla'][-1]:.2f}), jax {times['jax'][-1]:.2f} s (lower {times['jax_lower'][-1]:.2f}, "
            f"XLA {times['jax_xla'][-1]:.2f})")
    med = {k: statistics.median(v) for k, v in times.items()}
    # one ratio per repetition (its two compiles ran back to back, under the same load)
    ratios = [m / j for m, j in zip(times["meshir"], times["jax"])]
    m_coll = measure.hlo_collectives(exe.compiled_hlo_text())
    j_coll = measure.hlo_collectives(compiled.as_text())
    m_ops, j_ops = op_counts(exe.stablehlo_text()), op_counts(lowered.as_text())
    return {
        "size": name, "text": lm_step.SIZE_TEXT.get(name, name), "config": cfg.to_dict(), "layout": layout,
        "times_s": times, "median_s": med, "ratios": ratios, "ratio": statistics.median(ratios),
        "ratio_xla_only": statistics.median(m / j for m, j in zip(times["meshir_xla"], times["jax_xla"])),
        "stablehlo_ops": {"meshir": sum(m_ops.values()), "jax": sum(j_ops.values()),
                          "meshir_by_op": m_ops, "jax_by_op": j_ops},
        "stablehlo_chars": {"meshir": len(exe.stablehlo_text()), "jax": len(lowered.as_text())},
        "bytes_per_device": {"meshir": m_coll["bytes_per_device"], "jax": j_coll["bytes_per_device"]},
    }


def markdown(meta: dict, records: list[dict]) -> str:
    lines = [
        "# Compile time of the LM training step: MeshIR vs jax.jit",
        "",
        f"Generated by `python benchmarks/compile_time.py{' --quick' if meta['quick'] else ''}` on {meta['date']} "
        f"({meta['platform']}, {meta['cpus']} CPUs, jax {meta['jax']}; layout `{meta['layout']}`, 8 CPU devices). "
        f"{meta['reps']} compiles per side per size in alternating order after a warm-up compile of each side; "
        "MeshIR / jax is the median of the per-repetition ratios, times are medians. MeshIR: its passes plus "
        "XLA's compile of its module (`exe.compile_times`); jax: "
        f"`jax.jit(...).lower(...).compile()`. Target: MeshIR ≤ {TARGET}× jax.",
        "",
    ]
    if meta.get("note"):
        lines += [meta["note"], ""]
    lines += [
        "| size | MeshIR (s) | passes | XLA | jax lower + compile | lower | XLA | MeshIR / jax | target | "
        "XLA alone MeshIR / jax | StableHLO ops MeshIR vs jax | bytes/device MeshIR vs jax |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        m, ops, b = r["median_s"], r["stablehlo_ops"], r["bytes_per_device"]
        lines.append(
            f"| {r['text']} | {m['meshir']:.2f} | {m['meshir_passes']:.2f} | {m['meshir_xla']:.2f} | {m['jax']:.2f} | "
            f"{m['jax_lower']:.2f} | {m['jax_xla']:.2f} | **{r['ratio']:.3f}×** | "
            f"{'met' if r['ratio'] <= TARGET else 'missed'} | {r['ratio_xla_only']:.3f}× | {ops['meshir']:,} vs "
            f"{ops['jax']:,} | {b['meshir']:,} vs {b['jax']:,} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, 1 repetition; writes under results/quick/")
    p.add_argument("--sizes", help=f"comma-separated subset of {', '.join(lm_step.SIZES)} (or of the quick sizes)")
    p.add_argument("--layout", default=lm_step.DEFAULT_LAYOUT, choices=lm_step.LAYOUT_NAMES)
    p.add_argument("--reps", type=int, help="compiles per side per size (default 3; --quick 1)")
    p.add_argument("--note", default="")
    p.add_argument("--out", help="output folder (default: benchmarks/results, --quick: benchmarks/results/quick)")
    args = p.parse_args(argv)
    table = lm_step.QUICK_SIZES if args.quick else lm_step.SIZES
    chosen = harness.chosen_sizes(p, args.sizes, table)
    reps = args.reps or (1 if args.quick else 3)
    out = harness.results_dir(args.out, args.quick)

    harness.ensure_devices(8)
    warm = next(iter(lm_step.QUICK_SIZES.values()))
    run_size("warm-up", warm, args.layout, 1, say=lambda *_: None)  # backend start-up, imports
    records = []
    for name in chosen:
        print(f"{name}: {lm_step.SIZE_TEXT.get(name, name)}", flush=True)
        rec = run_size(name, table[name], args.layout, reps)
        print(f"  MeshIR / jax {rec['ratio']:.3f}x ({rec['median_s']['meshir']:.2f} vs {rec['median_s']['jax']:.2f} s); "
              f"StableHLO ops {rec['stablehlo_ops']['meshir']} vs {rec['stablehlo_ops']['jax']}", flush=True)
        records.append(rec)
    meta = {**harness.machine(), "quick": args.quick, "layout": args.layout, "reps": reps, "note": args.note}
    harness.write_report(out, "compile_time", {"meta": meta, "sizes": records}, markdown(meta, records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
