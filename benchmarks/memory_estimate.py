"""Memory per device: MeshIR's estimate (before XLA) against XLA's memory_analysis.

    python benchmarks/memory_estimate.py            # writes results/memory_estimate.{md,json}
    python benchmarks/memory_estimate.py --quick    # the quick sizes (smoke run)

Each benchmark case (cases.py: 5 models × dp/mp/2d on the 8-device mesh) is compiled with
`mi.compile`; the estimate is `exe.compile_report.memory` (transforms/analysis/memory_estimate.py:
arguments + results + peak live temporaries of the partitioned program, counting only
buffers that survive fusion), XLA's figure is argument + output + temp − alias from
`exe.memory_analysis()`. The ratio is estimate / XLA; the target is within ±25%.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import cases  # noqa: E402
import harness  # noqa: E402

TOLERANCE = 0.25


def measure(case, sizes: dict) -> dict:
    """MeshIR's estimate and XLA's figures for one case."""
    import meshir as mi

    prog = case.model.build(mi, mi.Mesh(cases.MESH_AXES), sizes)
    exe = mi.compile(prog, layout=case.rules)
    estimate, xla = exe.compile_report.memory, exe.compile_report.xla_memory
    return {"case": case.name, "estimate": dict(estimate.categories, total=estimate.total,
                                                temporaries=estimate.temporaries),
            "xla": xla, "ratio": estimate.total / xla["total"], "result_count": len(exe.signature.result_names)}


def markdown(meta: dict, rows: list[dict]) -> str:
    ratios = [r["ratio"] for r in rows]
    lines = [
        "# Memory per device: MeshIR's estimate against XLA's memory_analysis",
        "",
        f"`python benchmarks/memory_estimate.py{' --quick' if meta['sizes'] == 'quick' else ''}`, {meta['date']}, "
        f"jax {meta['jax']}, {meta['platform']}.",
        "",
        "Bytes per device on the 8-device mesh (x=4, y=2), f32, sizes `" + meta["sizes"] + "` of cases.py. "
        "**estimate**: `exe.compile_report.memory` (arguments + results + peak live temporaries of the "
        "partitioned program, only buffers that survive fusion; docs/decisions.md), computed before XLA. "
        "**XLA**: `exe.memory_analysis()`, total = argument + output + temp − alias. "
        f"Ratio = estimate / XLA; target within ±{TOLERANCE:.0%}. "
        f"Ratios: min {min(ratios):.2f}, max {max(ratios):.2f}; "
        f"{sum(abs(r - 1) <= TOLERANCE for r in ratios)} of {len(ratios)} within the target.",
        "",
        "| case | arguments | results | temporaries | estimate | XLA argument | XLA output | XLA temp | XLA alias "
        "| XLA total | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        e, x = r["estimate"], r["xla"]
        lines.append(f"| {r['case']} | {e['arguments']:,} | {e['results']:,} | {e['temporaries']:,} | {e['total']:,} | "
                     f"{x['argument']:,} | {x['output']:,} | {x['temp']:,} | {x['alias']:,} | {x['total']:,} | "
                     f"{r['ratio']:.2f}{'' if abs(r['ratio'] - 1) <= TOLERANCE else ' ✗'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results directory")
    parser.add_argument("--quick", action="store_true", help="the quick sizes")
    parser.add_argument("--cases", default=None, help="case patterns (cases.select_cases)")
    args = parser.parse_args(argv)
    harness.ensure_devices(8)
    size = "quick" if args.quick else "full"
    rows = []
    for case in cases.select_cases(args.cases):
        row = measure(case, cases.SIZES[size])
        rows.append(row)
        print(f"{case.name}: estimate {row['estimate']['total']:,} B, XLA {row['xla']['total']:,} B, "
              f"ratio {row['ratio']:.2f}")
    meta = {**harness.machine(), "sizes": size}
    harness.write_report(args.out, "memory_estimate", {"meta": meta, "rows": rows}, markdown(meta, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
