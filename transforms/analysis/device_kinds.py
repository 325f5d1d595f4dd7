"""The device kinds of the cost model (transforms/analysis/cost_model.py): one table of what a device
computes per second and what its links carry, so `CostModel(device="h100")` prices a step in
seconds. Every figure here is per device (per chip), and every entry can be replaced:
`CostModel(device=DeviceKind(...))`, or a per-axis `links=` for the axes that differ (an
inter-host axis over the data-centre network, say).

**flops_per_s** is the rate of a *dense f32 matmul at the compiler's default precision*, the
precision MeshIR programs are written in (f32) and lowered at (XLA's default dot precision):

- TPUs run such a matmul as one bf16 pass on the MXU, so the figure is the bf16 peak.
  Google Cloud TPU documentation, "TPU v3" page: peak compute per chip 123 teraflops (bf16);
  "TPU v4" page: peak compute per chip 275 teraflops (bf16 or int8).
- NVIDIA GPUs of the Ampere and Hopper generations run it on the tensor cores in TF32, so the
  figure is the dense TF32 peak. NVIDIA A100 datasheet (SXM): 156 TFLOP/s TF32, 312 TFLOP/s
  bf16 (dense; twice that with structured sparsity), 19.5 TFLOP/s plain FP32. NVIDIA H100
  datasheet (SXM): 494.5 TFLOP/s TF32 (the datasheet's 989 is with sparsity), 989 TFLOP/s
  dense bf16, 67 TFLOP/s plain FP32. A program compiled at precision "highest" gets the
  plain-FP32 rate: give it a DeviceKind of its own.

Peaks are upper bounds; a real step reaches some fraction of them (a model-FLOPs utilisation
of 40–60% is typical of large training runs). Only ratios between plans decide a search, so a
common factor does not change which layout wins; it does change the seconds reported.

**link** is the α–β link every mesh axis has unless `links=` says otherwise: α the latency of
one ring step (seconds), β the bandwidth one device sends at along the axis (bytes/second,
one direction), the units of `AxisLink` and of the ring formulas (`ring_steps`, `ring_bytes`).

- TPU v3 (2D torus) and v4 (3D torus): the Cloud TPU pages give the all-reduce bandwidth per
  pod, 340 TB/s over 1024 v3 chips and 1.1 PB/s over 4096 v4 chips, i.e. about 330 and 270
  GB/s per chip; split over the torus's 2 (v3) or 3 (v4) dimensions, about 1.6e11 and 9e10
  bytes/s per mesh axis laid along one torus dimension. Latency: of the order of a
  microsecond per ICI hop (an order of magnitude, not a datasheet figure).
- A100 and H100 in an 8-GPU NVSwitch node: NVLink 3 gives 600 GB/s and NVLink 4 900 GB/s per
  GPU, both directions together (A100 and H100 datasheets), so 3e11 and 4.5e11 bytes/s one
  way, to any peer through the switch. Latency: a few microseconds per ring step, the order
  of NCCL's small-message all-reduce (an order of magnitude, not a datasheet figure).
- cpu-virtual: measured, see below.

**cpu-virtual** is this development machine as MeshIR runs on it: 8 virtual XLA:CPU devices
(`--xla_force_host_platform_device_count=8`) sharing 2 cores, so one device computes at about
a quarter of one core while all 8 work, and a "link" is a memory copy between threads of one
process. Its figures are not a datasheet's: `mi.calibrate()` measured them here
(benchmarks/calibrate.py, results in benchmarks/results/calibration.{md,json}, 2026-11-24),
with its own micro-benchmarks: an f32 einsum split over all 8 devices, and all_gathers of
seven sizes (16 KiB to 16 MiB shards) over each axis of a 4×2 mesh fitted to
`steps·α + bytes/β`, with a second β beyond a knee. The row is the median of three runs on
the quiet machine (results/calibration_runs/quiet_run*): about 25 GFLOP/s per device (some
200 GFLOP/s for the 8 together), α ≈ 7 µs (the three runs: 0, 7 and 18 µs; α sits under the
call overhead of ~0.2 ms that is subtracted, so it is the least certain figure), β ≈ 2.1
GB/s per device up to 4 MiB sent, and about 0.43 GB/s for the bytes beyond (cache misses,
page faults: `AxisLink.large_bytes_per_s`, `large_from`). An earlier single run, made while
another job loaded the machine, gave α ≈ 65 µs; runs on the loaded machine
(results/calibration_runs/loaded_run*) scatter α over 0–37 µs and the FLOP rate over 13–25
GFLOP/s. On another machine, run `mi.calibrate()` and use what it returns.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from meshir.dialect.diagnostics import MeshIRValueError

from .axis_link import AxisLink


@dataclass(frozen=True)
class DeviceKind:
    """What one device computes and sends per second: `flops_per_s` (dense f32 matmul at the
    default precision; see `precision`), the `link` of every mesh axis without its own, and
    where the figures come from (`source`)."""

    name: str
    flops_per_s: float
    link: AxisLink
    #: What the figures are, for a reader; not compared (a kind is its numbers).
    precision: str = field(default="f32", compare=False)
    source: str = field(default="", compare=False)

    def __post_init__(self):
        if not self.name or any(c in self.name for c in ":,{}= \t\n"):
            raise MeshIRValueError(f"a device kind's name is a word without ':', ',', '=', braces or spaces, "
                                   f"got {self.name!r}")
        if not (self.flops_per_s > 0 and self.flops_per_s != float("inf")):
            raise MeshIRValueError(f"a device kind needs flops_per_s > 0 (finite), got {self.flops_per_s!r}")
        if not isinstance(self.link, AxisLink):
            raise MeshIRValueError(f"a device kind's link is a mi.AxisLink, got {self.link!r}")

    def option_text(self) -> str:
        """The pass-option spelling: the table's name, or name:flops_per_s:latency_s:bytes_per_s
        for a kind that is not the table's entry of that name."""
        if DEVICE_KINDS.get(self.name) == self:
            return self.name
        return f"{self.name}:{self.flops_per_s!r}:{self.link.option_text()}"


DEVICE_KINDS: dict[str, DeviceKind] = {k.name: k for k in (
    DeviceKind("cpu-virtual", 2.5e+10, AxisLink(latency_s=7.0e-06, bytes_per_s=2.11e+09,
                                                   large_bytes_per_s=4.3e+08, large_from=4194304), "f32",
               "measured by mi.calibrate() on the development machine (8 virtual XLA:CPU devices on 2 "
               "cores), 2026-11-24: the median of three runs on the quiet machine, "
               "benchmarks/results/calibration.md (the median run) and results/calibration_runs/"),
    DeviceKind("tpu-v3", 123e12, AxisLink(latency_s=1e-6, bytes_per_s=1.6e11), "bf16 (XLA's default for f32)",
               "Cloud TPU v3 page: 123 TFLOP/s bf16 per chip; 340 TB/s all-reduce per 1024-chip pod, 2D torus"),
    DeviceKind("tpu-v4", 275e12, AxisLink(latency_s=1e-6, bytes_per_s=9e10), "bf16 (XLA's default for f32)",
               "Cloud TPU v4 page: 275 TFLOP/s bf16 per chip; 1.1 PB/s all-reduce per 4096-chip pod, 3D torus"),
    DeviceKind("a100", 156e12, AxisLink(latency_s=5e-6, bytes_per_s=3e11), "tf32 (XLA's default for f32)",
               "NVIDIA A100 SXM datasheet: 156 TFLOP/s dense TF32 (312 bf16, 19.5 FP32); NVLink 600 GB/s"),
    DeviceKind("h100", 494.5e12, AxisLink(latency_s=5e-6, bytes_per_s=4.5e11), "tf32 (XLA's default for f32)",
               "NVIDIA H100 SXM datasheet: 494.5 TFLOP/s dense TF32 (989 bf16, 67 FP32); NVLink 900 GB/s"),
)}


def device_kind(kind) -> DeviceKind:
    """A DeviceKind from the table by name, or one given as a DeviceKind; pass-option text
    name:flops_per_s:latency_s:bytes_per_s spells one that is not in the table."""
    if isinstance(kind, DeviceKind):
        return kind
    if not isinstance(kind, str):
        raise MeshIRValueError(f"a device is a device-kind name ({', '.join(DEVICE_KINDS)}) or a DeviceKind, "
                               f"got {kind!r}")
    if ":" in kind:
        parts = kind.split(":")
        try:
            return DeviceKind(parts[0], float(parts[1]), AxisLink.parse(parts[2:]), source="options")
        except ValueError:
            raise MeshIRValueError(f"a device is a name ({', '.join(DEVICE_KINDS)}) or "
                                   f"name:flops_per_s:latency_s:bytes_per_s[:large_bytes_per_s:large_from], got '{kind}'") from None
    if kind not in DEVICE_KINDS:
        raise MeshIRValueError(f"unknown device kind '{kind}'; known: {', '.join(DEVICE_KINDS)} "
                               "(or a mi.DeviceKind of your own)")
    return DEVICE_KINDS[kind]


def kind_of(platform: str, device_kind: str) -> str | None:
    """The table's name for a jax device (`device.platform`, `device.device_kind`, e.g. "gpu",
    "NVIDIA H100 80GB HBM3"), or None when the table has no such kind."""
    text = device_kind.lower()
    if platform == "cpu":
        return "cpu-virtual"
    for needle, name in (("h100", "h100"), ("a100", "a100"), ("v4", "tpu-v4"), ("v3", "tpu-v3")):
        if needle in text and (platform == "tpu") == name.startswith("tpu"):
            return name
    return None
