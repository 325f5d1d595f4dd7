"""MeshIR programs compiled by XLA:TPU for real TPU topologies, without a TPU (docs/tpu.md):
one FFN on four topologies, and the papers' training steps beside jax.jit's.

    python benchmarks/tpu_compile.py            # needs the tpu extra; writes results/tpu_compile.md
    python benchmarks/tpu_compile.py --papers   # results/tpu_papers.{md,json} (about an hour)
    python benchmarks/tpu_compile.py --papers --quick   # reduced sizes (results/quick/)

The FFN: each row is `relu(x @ w1) @ w2` (batch 1024, d_model 1024, d_ff 4096, f32) under
`batch:x; d_ff:y` on a topology's devices. It shows MeshIR's collectives beside those read
from the compiled TPU HLO (bytes per device, one ring convention), XLA:TPU's memory per device
beside MeshIR's estimate, XLA:TPU's `optimal_seconds`, and the compile's wall time (MeshIR's
passes and XLA:TPU). Nothing runs.

--papers: tpu_papers.py (the 4.9B and 1T training steps on TPU v3 pods, MeshIR beside
jax.jit, and compile time from 8 to 2048 devices).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax

import meshir as mi
from meshir.lowering.runtime import tpu

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
TOPOLOGIES = [("v5e:2x4", {"x": 4, "y": 2}), ("v4:2x2x1", {"x": 4, "y": 2}), ("v3:16x16", {"x": 32, "y": 16}),
              ("v5e:16x16", {"x": 16, "y": 16})]


def ffn(mesh, batch: int = 1024, d_model: int = 1024, d_ff: int = 4096) -> mi.Program:
    b, m, f = mi.Dim("batch", batch), mi.Dim("d_model", d_model), mi.Dim("d_ff", d_ff)
    with mi.Program("ffn", mesh) as prog:
        x, w1, w2 = prog.argument("x", [b, m]), prog.argument("w1", [m, f]), prog.argument("w2", [f, m])
        prog.result(mi.einsum(mi.relu(mi.einsum(x, w1, output=[b, f])), w2, output=[b, m]), name="y")
    return prog


def _bytes(records) -> str:
    totals: dict[str, int] = {}
    for kind, nbytes in records:
        totals[kind] = totals.get(kind, 0) + nbytes
    return ", ".join(f"{k} {v:,} B" for k, v in sorted(totals.items())) or "none"


def row(topology: str, axes: dict) -> str:
    start = time.perf_counter()
    exe = mi.compile(ffn(mi.tpu_mesh(topology, axes)), layout="batch:x;d_ff:y")
    seconds = time.perf_counter() - start
    report, memory, cost = exe.compile_report, exe.compile_report.xla_memory, exe.compile_report.xla_cost
    ours = _bytes((c.kind.replace("_", "-"), c.bytes_per_device) for c in report.collectives)
    hlo = _bytes((c.kind, c.bytes_per_device) for c in exe.compiled_collectives())
    mesh = " ".join(f"{a}={n}" for a, n in axes.items())
    return (f"| {topology}, {mesh} ({len(exe.devices)} × {exe.devices[0].device_kind}) | {ours} | {hlo} | "
            f"{memory['total'] / 2**20:.2f} / {report.memory.total / 2**20:.2f} MiB | "
            f"{cost['optimal_seconds'] * 1e6:.1f} µs | {seconds:.2f} s |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="the FFN's table (default results/tpu_compile.md); with "
                        "--papers, the results directory")
    parser.add_argument("--papers", action="store_true", help="the papers' training steps (tpu_papers.py)")
    parser.add_argument("--quick", action="store_true", help="with --papers: reduced sizes, results/quick/")
    args = parser.parse_args(argv)
    if args.papers:
        import tpu_papers  # only here: it loads paper_scale and the LM example, which the FFN does not need

        return tpu_papers.main(args.out, args.quick)
    args.out = args.out or str(HERE / "results" / "tpu_compile.md")
    rows = [row(t, a) for t, a in TOPOLOGIES]
    text = "\n".join([
        "# An FFN compiled by XLA:TPU without a TPU",
        "",
        f"`python benchmarks/tpu_compile.py`; jax {jax.__version__}, libtpu {tpu.libtpu_version()}. "
        "relu(x @ w1) @ w2, batch 1024, d_model 1024, d_ff 4096, f32, layout `batch:x; d_ff:y`. Bytes are "
        "per device in MeshIR's ring convention (docs/tpu.md), from MeshIR's report and from the compiled TPU "
        "HLO; memory is XLA:TPU's per device against MeshIR's estimate; compile is wall time (MeshIR's passes "
        "and XLA:TPU; the first row also loads libtpu).",
        "",
        "| topology, mesh | MeshIR's collectives | compiled TPU HLO | XLA:TPU memory / MeshIR estimate | "
        "optimal_seconds | compile |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ])
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
