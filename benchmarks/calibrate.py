"""The cost model's constants measured on this machine: `mi.calibrate()` on a 4×2 mesh of
8 CPU devices, written where the `cpu-virtual` row of the device-kinds table
(transforms/analysis/device_kinds.py) takes its figures from.

    python benchmarks/calibrate.py            # writes results/calibration.md and .json
    python benchmarks/calibrate.py --repeats 21

How it measures (python/meshir/api/calibration/calibrate.py): its own micro-benchmarks, compiled with
`mi.compile`: an f32 einsum split over all 8 devices (FLOP rate per device while all work at
once), all_gathers of seven shard sizes (16 KiB–16 MiB) over each mesh axis (fitted to the cost
model's `ring_steps·α + ring_bytes/β`, a second β beyond a knee), and a tiny op whose time (the call overhead) is subtracted
from both. Medians over interleaved rounds.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import harness  # noqa: E402


def markdown(meta: dict, data: dict) -> str:
    d, c = data["device"], data["compute"]
    lines = [
        "# Calibration: the cost model's constants on this machine",
        "",
        f"`python benchmarks/calibrate.py --repeats {data['repeats']}`, {meta['date']}, jax {meta['jax']}, "
        f"{meta['platform']}, {meta['cpus']} CPU cores, 8 virtual XLA:CPU devices, mesh "
        f"{'×'.join(f'{a}={n}' for a, n in data['mesh'].items())}; {meta['seconds']:.1f} s in all.",
        "",
        "`mi.calibrate()`'s own micro-benchmarks, each compiled with `mi.compile` and timed in interleaved "
        "rounds (medians), less the call overhead (a tiny elementwise op on every device: "
        f"{data['overhead_s'] * 1e6:.0f} µs). **Compute**: an f32 einsum x[b, i]·w[i, j] with b split over "
        "every axis, so all 8 devices multiply at once on the 2 shared cores. **Links**: all_gather of "
        "x[a, 256] f32 with a split over one axis, seven shard sizes per axis, fitted to the cost model's "
        "`ring_steps·α + ring_bytes/β` with a large-message β beyond a knee (non-negative least squares on relative error). The `cpu-virtual` "
        "row of transforms/analysis/device_kinds.py is the device below (rounded).",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| FLOP/s per device (f32) | {d['flops_per_s']:.3g} ({c['flops_per_device'] / 1e6:.0f} MFLOP in "
        f"{c['seconds'] * 1e3:.2f} ms) |",
        f"| α, all axes (s per ring step) | {d['latency_s']:.3g} |",
        f"| β, all axes (bytes/s per device) | {d['bytes_per_s']:.3g} |",
    ]
    if d.get("large_from"):
        lines += [f"| β beyond {d['large_from']:,} bytes sent, all axes | {d['large_bytes_per_s']:.3g} |"]
    for axis, link in data["links"].items():
        lines += [f"| α, axis {axis} | {link['latency_s']:.3g} |", f"| β, axis {axis} | {link['bytes_per_s']:.3g} |"]
        if link.get("large_from"):
            lines += [f"| β beyond {link['large_from']:,} bytes sent, axis {axis} | {link['large_bytes_per_s']:.3g} |"]
    lines += ["", "| axis | n | shard | ring steps | bytes sent | measured | fitted (axis link) | fit / measured |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in data["samples"]:
        lines.append(f"| {s['axis']} | {s['n']} | {s['shard_bytes'] >> 10} KiB | {s['steps']} | {s['bytes_sent']:,} | "
                     f"{s['seconds'] * 1e3:.3f} ms | {s['predicted_s'] * 1e3:.3f} ms | "
                     + (f"{s['predicted_s'] / s['seconds']:.2f} |" if s['seconds'] > 0 else "— (overhead swallowed it) |"))
    lines += ["", "On 2 shared cores a \"link\" is a memory copy between the threads of one process, and "
              "8 devices share the cores' arithmetic: these figures describe this machine's virtual "
              "devices, not any hardware's, and vary with its load by tens of percent between runs. Shards of "
              "16 KiB to 16 MiB: messages of several MiB cost more per byte than small ones (cache misses "
              "and page faults of the gathered buffers), so the fit has a knee: α, β on the samples up to "
              "it, a second β for the bytes beyond it (`AxisLink.large_bytes_per_s`, `large_from`), the "
              "knee being the sample size that fits all samples best."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results directory")
    parser.add_argument("--repeats", type=int, default=21, help="timed rounds (medians are kept)")
    args = parser.parse_args(argv)
    import meshir as mi

    cal, seconds = harness.timed(
        lambda: mi.calibrate(mi.Mesh({"x": 4, "y": 2}), repeats=args.repeats, name="cpu-virtual"))
    print(cal)
    meta = {**harness.machine(), "seconds": seconds}
    data = cal.to_json()
    harness.write_report(args.out, "calibration", {"meta": meta, **data}, markdown(meta, data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
