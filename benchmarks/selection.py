"""Bytes per device and time of top_k, argmax and cumsum along a split dim: MeshIR's merge of
per-device candidates or block totals, against jax.jit with NamedSharding (XLA's partitioner)
on the same arrays, in one process.

    python benchmarks/selection.py            # writes results/selection.md and .json

Each case is one op on `x[b, d]` (f32) with `d` split over the 8 CPU devices:

- `meshir`: explicit mode (each device selects or scans its block; one all_gather of k
  candidates, or of one block total, per device and position of b);
- `gspmd`: MeshIR in gspmd mode (XLA's partitioner chooses the collectives);
- `jax`: `jax.lax.top_k` / `jnp.argmax` / `jnp.cumsum` under `jax.jit` with the operand
  sharded `P(None, "x")`.

Bytes are read from each compiled HLO (lowering/runtime/hlo_collectives.py, ring formulas); every result
is checked against jax's. Times are the median of interleaved calls (harness.time_calls) on
this 2-core machine, where 8 virtual devices share two cores: a ratio, not a claim about a
real interconnect.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
from meshir.lowering.runtime import hlo_collectives as hlo_stats  # noqa: E402

#: (name, op, b, d, k, calls per contender: None for --reps; the last case costs XLA's
#: partitioned cumsum ~25 s a call)
CASES = [
    ("top_k k=8, vocab 32768", "top_k", 8, 32768, 8, None),
    ("top_k k=64, vocab 32768", "top_k", 8, 32768, 64, None),
    ("top_k k=8, vocab 262144", "top_k", 8, 262144, 8, None),
    ("argmax, vocab 262144", "argmax", 8, 262144, 1, None),
    ("cumsum, length 32768", "cumsum", 8, 32768, 0, None),
    ("cumsum, length 262144", "cumsum", 8, 262144, 0, 3),
]


def meshir_program(op: str, b: int, d: int, k: int):
    import meshir as mi

    with mi.Program(op, mi.Mesh({"x": 8}), layout={"d": "x"}) as prog:
        x = prog.argument("x", [mi.Dim("b", b), mi.Dim("d", d)])
        if op == "top_k":
            values, indices = mi.top_k(x, "d", mi.Dim("k", k))
            prog.result(values, name="values")
            prog.result(indices, name="indices")
        elif op == "argmax":
            prog.result(mi.argmax(x, "d"), name="indices")
        else:
            prog.result(mi.cumsum(x, "d"), name="sums")
    return prog


def jax_function(op: str, k: int):
    import jax
    import jax.numpy as jnp

    return {"top_k": lambda x: jax.lax.top_k(x, k), "argmax": lambda x: jnp.argmax(x, axis=1),
            "cumsum": lambda x: jnp.cumsum(x, axis=1)}[op]


def measure(op: str, b: int, d: int, k: int, reps: int, warmup: int = 3) -> dict:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    import meshir as mi

    x = np.random.default_rng(0).standard_normal((b, d)).astype(np.float32)
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]), ("x",))
    sharded = jax.device_put(x, NamedSharding(mesh, PartitionSpec(None, "x")))
    fn = jax.jit(jax_function(op, k))
    want = [np.asarray(v) for v in jax.tree.leaves(fn(sharded))]
    compiled = {"jax": (fn.lower(sharded).compile().as_text(), lambda: fn(sharded))}
    for mode in ("explicit", "gspmd"):
        exe = mi.compile(meshir_program(op, b, d, k), mode=mode)
        got = [np.asarray(v) for v in jax.tree.leaves(tuple(exe(sharded)) if op == "top_k" else exe(sharded))]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * np.sqrt(d), err_msg=f"{op} {mode}")  # f32 sums in another order
        compiled["meshir" if mode == "explicit" else "gspmd"] = (exe.compiled_hlo_text(), lambda exe=exe: exe(sharded))
    times = harness.time_calls({name: call for name, (_, call) in compiled.items()}, reps, warmup=warmup)
    record = {}
    for name, (hlo, _) in compiled.items():
        summary = hlo_stats.summarize(hlo_stats.parse_collectives(hlo))
        record[name] = {"hlo_bytes_per_device": summary["bytes_per_device"],
                        "hlo_collectives": {kind: v["count"] for kind, v in sorted(summary["by_kind"].items())},
                        "median_ms": 1e3 * times[name]["median_s"]}
    return record


def markdown(meta: dict, rows: list[dict]) -> str:
    lines = [
        "# Selection and scans along a split dim: bytes per device and time",
        "",
        f"`python benchmarks/selection.py`, {meta['date']}, jax {meta['jax']}, {meta['platform']}, {meta['cpus']} CPUs.",
        "",
        "One op on `x[b=8, d]` f32 with `d` split over 8 CPU devices. **meshir**: explicit mode (select or scan "
        "each block, one all_gather of k candidates or one block total); **gspmd**: MeshIR's gspmd mode (XLA "
        "partitions); **jax**: `jax.jit` with `NamedSharding(P(None, 'x'))`. Bytes from each compiled HLO "
        "(lowering/runtime/hlo_collectives.py); times are medians of interleaved calls on 2 cores (8 virtual devices), so the ratios "
        "reflect local work more than communication. Every result equals jax's.",
        "",
        "| case | meshir B | gspmd B | jax B | jax / meshir bytes | meshir ms | gspmd ms | jax ms | jax / meshir time | meshir HLO | jax HLO |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        m, g, j = r["meshir"], r["gspmd"], r["jax"]
        kinds = lambda c: ", ".join(f"{k} ×{n}" for k, n in c.items()) or "none"  # noqa: E731
        ratio = j["hlo_bytes_per_device"] / m["hlo_bytes_per_device"] if m["hlo_bytes_per_device"] else float("inf")
        lines.append(
            f"| {r['case']} | {m['hlo_bytes_per_device']:,} | {g['hlo_bytes_per_device']:,} | "
            f"{j['hlo_bytes_per_device']:,} | {ratio:,.0f}× | {m['median_ms']:.2f} | {g['median_ms']:.2f} | {j['median_ms']:.2f} | "
            f"{j['median_ms'] / m['median_ms']:.2f} | {kinds(m['hlo_collectives'])} | {kinds(j['hlo_collectives'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    parser.add_argument("--reps", type=int, default=20, help="timed calls per contender")
    parser.add_argument("--quick", action="store_true", help="the first case only, 3 calls, into results/quick/")
    args = parser.parse_args(argv)
    harness.ensure_devices(8)
    rows = []
    for name, op, b, d, k, reps in CASES[:1] if args.quick else CASES:
        record = measure(op, b, d, k, 3 if args.quick else reps or args.reps, 1 if reps else 3)
        rows.append({"case": name, **record})
        print(f"{name}: meshir {record['meshir']['hlo_bytes_per_device']:,} B {record['meshir']['median_ms']:.2f} ms, "
              f"gspmd {record['gspmd']['hlo_bytes_per_device']:,} B, "
              f"jax {record['jax']['hlo_bytes_per_device']:,} B {record['jax']['median_ms']:.2f} ms", flush=True)
    meta = harness.machine()
    harness.write_report(harness.results_dir(args.out, args.quick), "selection", {"meta": meta, "rows": rows},
                         markdown(meta, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
