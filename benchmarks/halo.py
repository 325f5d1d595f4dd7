"""Bytes per device of a shift along a split dim: the halo exchange against the gather it
replaces, and against XLA partitioning the same shift itself.

    python benchmarks/halo.py            # writes results/halo.md and results/halo.json

Each case is one `mi.shift` of `x[b, d]` (f32) along `d`, split over the case's axes of an
8-device CPU mesh, computed by three programs:

- `halo`: `mi.shift` in explicit mode, where `d` stays split and each device receives the
  |offset| boundary rows from its neighbour (one collective-permute);
- `gather`: what explicit mode compiled before (and still does for a shift past one block):
  `all_gather` of `d`, the shift on the whole dim, `all_slice` back, written with the API's
  collectives;
- `gspmd`: `mi.shift` in gspmd mode (XLA's SPMD partitioner chooses the collectives).

Bytes are read from each compiled HLO (lowering/runtime/hlo_collectives.py, the cost model's ring
formulas) and, for the explicit programs, from the compile report; every result is checked
against the reference interpreter.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
from meshir.lowering.runtime import hlo_collectives as hlo_stats  # noqa: E402

#: (name, mesh, layout of x, b, d, offset, wrap)
CASES = [
    ("1 row", {"x": 8}, {"d": "x"}, 4, 64, 1, False),
    ("1 row back, wrap", {"x": 8}, {"d": "x"}, 4, 64, -1, True),
    ("1 row, large", {"x": 8}, {"d": "x"}, 128, 1024, 1, False),
    ("whole block (128 rows)", {"x": 8}, {"d": "x"}, 128, 1024, 128, False),
    ("1 row, d over (x, y)", {"x": 4, "y": 2}, {"d": ("x", "y")}, 128, 1024, 1, False),
    ("1 row, d over y, b over x", {"x": 4, "y": 2}, {"d": "y", "b": "x"}, 128, 1024, 1, False),
]


def program(mesh, layout, b, d, offset, wrap, gather: bool):
    import meshir as mi

    with mi.Program("shift", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [mi.Dim("b", b), mi.Dim("d", d)], layout=layout)
        if gather:
            whole = mi.all_gather(x, "d", layout["d"])
            y = mi.all_slice(mi.shift(whole, "d", offset, wrap=wrap, fill=-1.0), "d", layout["d"])
        else:
            y = mi.shift(x, "d", offset, wrap=wrap, fill=-1.0)
        prog.result(y, name="y")
    return prog


def measure(mesh, layout, b, d, offset, wrap) -> dict:
    import meshir as mi

    x = np.random.default_rng(0).standard_normal((b, d)).astype(np.float32)
    record = {}
    for name, gather, mode in [("halo", False, "explicit"), ("gather", True, "explicit"), ("gspmd", False, "gspmd")]:
        prog = program(mesh, layout, b, d, offset, wrap, gather)
        exe = mi.compile(prog, mode=mode)
        np.testing.assert_array_equal(np.asarray(exe(x=x)), mi.interpret(prog, x=x), err_msg=name)
        hlo = hlo_stats.summarize(hlo_stats.parse_collectives(exe.compiled_hlo_text()))
        record[name] = {
            "hlo_bytes_per_device": hlo["bytes_per_device"],
            "hlo_collectives": {k: v["count"] for k, v in sorted(hlo["by_kind"].items())},
            "report_bytes_per_device": exe.compile_report.total_bytes_per_device if mode == "explicit" else None,
            "report_collectives": [c.kind for c in exe.compile_report.collectives] if mode == "explicit" else None,
        }
    return record


def markdown(meta: dict, rows: list[dict]) -> str:
    lines = [
        "# Halo exchange: bytes per device of a shift along a split dim",
        "",
        f"`python benchmarks/halo.py`, {meta['date']}, jax {meta['jax']}, {meta['platform']}.",
        "",
        "One `mi.shift` of `x[b, d]` f32 along `d` (fill -1), on 8 CPU devices. **halo**: explicit mode now "
        "(the boundary rows from the neighbour, one collective-permute); **gather**: explicit mode before "
        "(all_gather of d, shift, all_slice; still the path past one block); **gspmd**: XLA's partitioner. "
        "Bytes from the compiled HLO (lowering/runtime/hlo_collectives.py); the compile report's bytes agree for halo and gather. "
        "The gather column is what `mi.shift` compiled to before the halo exchange (checked at commit 1a12011: "
        "the same bytes on every case).",
        "",
        "| case | mesh | layout | shard | halo B | gather B | gather / halo | gspmd B | halo HLO | gspmd HLO |",
        "|---|---|---|---|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        h, g, s = r["halo"], r["gather"], r["gspmd"]
        ratio = g["hlo_bytes_per_device"] / h["hlo_bytes_per_device"] if h["hlo_bytes_per_device"] else float("inf")
        kinds = lambda c: ", ".join(f"{k} ×{n}" for k, n in c.items()) or "none"  # noqa: E731
        lines.append(
            f"| {r['case']} | {r['mesh']} | {r['layout']} | {r['shard']} | {h['hlo_bytes_per_device']:,} | "
            f"{g['hlo_bytes_per_device']:,} | {ratio:,.0f}× | {s['hlo_bytes_per_device']:,} | "
            f"{kinds(h['hlo_collectives'])} | {kinds(s['hlo_collectives'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results directory")
    args = parser.parse_args(argv)
    rows = []
    for name, mesh, layout, b, d, offset, wrap in CASES:
        record = measure(mesh, layout, b, d, offset, wrap)
        for kind in ("halo", "gather"):
            r = record[kind]
            if r["report_bytes_per_device"] != r["hlo_bytes_per_device"]:
                raise SystemExit(f"{name}, {kind}: the report says {r['report_bytes_per_device']} B, "
                                 f"the HLO {r['hlo_bytes_per_device']} B")
        axes = {k: (v,) if isinstance(v, str) else tuple(v) for k, v in layout.items()}
        shard = [size // math.prod(mesh[a] for a in axes.get(dim, ())) for dim, size in (("b", b), ("d", d))]
        rows.append({"case": f"{name}: shift {offset}{', wrap' if wrap else ''}",
                     "mesh": "×".join(f"{a}={n}" for a, n in mesh.items()),
                     "layout": ", ".join(f"{k}@{'(' + ','.join(v) + ')' if len(v) > 1 else v[0]}" for k, v in axes.items()),
                     "shard": f"[{', '.join(map(str, shard))}]", **record})
        print(f"{name}: halo {record['halo']['hlo_bytes_per_device']:,} B, gather "
              f"{record['gather']['hlo_bytes_per_device']:,} B, gspmd {record['gspmd']['hlo_bytes_per_device']:,} B")
    meta = harness.machine()
    harness.write_report(args.out, "halo", {"meta": meta, "rows": rows}, markdown(meta, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
