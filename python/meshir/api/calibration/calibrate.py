"""`mi.calibrate()`: measure the cost model's constants (a DeviceKind and per-axis α–β links)
on the devices MeshIR runs on, with micro-benchmarks of its own.

Three kinds of programs, each compiled with `mi.compile` on `mesh` and timed together
(one call of each per round, `repeats` rounds after one untimed round, each call ending in
`block_until_ready`; the median of each is kept), so a slow phase of a shared machine slows
every measurement alike:

- **overhead**: a tiny elementwise op on every device: what any call costs (dispatch,
  launching one thread per device), subtracted from the others;
- **compute**: an f32 einsum `x[b, i] · w[i, j] -> [b, j]` with `b` split over every mesh
  axis, so every device multiplies its own rows at once: `flops_per_s` = 2·(b/devices)·i·j
  FLOPs per device over the median seconds (less the overhead);
- **links**: for each mesh axis, `all_gather` of `x[a, m]` f32 (`a` split over that axis;
  every group of the other axes gathers at once) for each shard size in `sizes`. The
  seconds (less the overhead) are fitted to `ring_steps·α + ring_bytes/β`, the cost model's
  own formulas (transforms/analysis/cost_model.py), with a second β for the bytes beyond a knee where
  the large messages cost more per byte (`AxisLink.large_bytes_per_s`; `_fit`), by
  non-negative least squares on relative error
  (each sample's residual over its time, but over no less than a tenth of the largest time,
  so the smallest message weighs as much as the largest unless the overhead swallowed it).
  Fitting every axis's samples together gives the device's default link.

The layouts and programs are these micro-benchmarks only, never a model's (the auto-layout
search is validated on the Transformer step and the MLP, which calibration must not see).
"""
from __future__ import annotations

import jax
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from meshir.dialect.diagnostics import MeshIRValueError
from meshir.dialect.mesh import Mesh
from meshir.transforms.analysis.cost_model import AxisLink, CostModel, ring_bytes, ring_steps
from meshir.transforms.analysis.device_kinds import DeviceKind

from meshir.api import _checks as checks
from meshir.api.calibration._timing import interleaved_times
from meshir.api.compilation.compile import compile as mi_compile
from meshir.api.programs.dims import Dim
from meshir.api.programs.program import Program
from meshir.api.ops.contraction import einsum
from meshir.api.ops.collectives import all_gather

__all__ = ["Calibration", "calibrate"]

#: Shard sizes (bytes per device) of the all_gathers: 16 KiB to 16 MiB. On the virtual CPU
#: devices, messages of several MiB cost more per byte than small ones (cache misses and page
#: faults of the gathered buffers: ~2 GB/s up to a few MiB sent, ~0.2–0.3 GB/s per byte
#: beyond, measured 2026-11-24), so the fit has two bandwidths and the knee between them
#: (`AxisLink.large_bytes_per_s`, `large_from`), found where the samples put it.
SIZES = (16 << 10, 128 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20)
#: Shards up to this size fit α and β (the small-message link); larger ones fit the knee.
SMALL = 1 << 20
#: The einsum per device: (rows of b per device, i, j).
MATMUL = (512, 1024, 1024)
_ROW = 256  # f32 elements in one row of the gathered tensor (1 KiB)
_KIND = "all_gather"


@dataclass(frozen=True)
class Sample:
    """One timed all_gather: over `axis` (`n` devices), its shard, the cost model's ring steps
    and bytes sent per device, and the measured seconds (median, less the call overhead)."""

    axis: str
    n: int
    shard_bytes: int
    steps: int
    bytes_sent: int
    seconds: float


@dataclass(frozen=True)
class Calibration:
    """What `mi.calibrate()` measured: `device` (FLOP rate, and the link fitted over every
    axis), `links` (each axis's own fit), the call overhead, and the samples behind them."""

    device: DeviceKind
    links: dict = field(hash=False)
    mesh: dict = field(hash=False)
    overhead_s: float = 0.0
    compute_seconds: float = 0.0
    flops_per_device: float = 0.0
    samples: tuple = ()
    repeats: int = 0

    def cost_model(self, objective: str = "time") -> CostModel:
        """A CostModel with this device and these per-axis links."""
        return CostModel(objective, dict(self.links), self.device)

    def predicted(self, sample: Sample, link: AxisLink | None = None) -> float:
        """The seconds the fitted link of `sample.axis` (or `link`) gives that sample."""
        link = link or self.links[sample.axis]
        return link.seconds(sample.steps, sample.bytes_sent)

    def to_json(self) -> dict:
        d = self.device
        return {
            "mesh": self.mesh, "repeats": self.repeats, "overhead_s": self.overhead_s,
            "device": {"name": d.name, "flops_per_s": d.flops_per_s, **_link_json(d.link)},
            "compute": {"flops_per_device": self.flops_per_device, "seconds": self.compute_seconds},
            "links": {a: _link_json(k) for a, k in self.links.items()},
            "samples": [{**vars(s), "predicted_s": self.predicted(s)} for s in self.samples],
        }

    def __str__(self) -> str:
        d = self.device
        mesh = "×".join(f"{a}={n}" for a, n in self.mesh.items())
        lines = [f"calibration on mesh {mesh} ({self.repeats} repeats, medians; call overhead "
                 f"{self.overhead_s * 1e6:.0f} µs subtracted)",
                 f"  compute: {d.flops_per_s / 1e9:.3g} GFLOP/s per device (f32 einsum, "
                 f"{self.flops_per_device / 1e6:.0f} MFLOP per device in {self.compute_seconds * 1e3:.2f} ms)",
                 f"  link, all axes: {_link_text(d.link)}"]
        for axis, link in self.links.items():
            lines.append(f"  link {axis}: {_link_text(link)}")
        lines.append("  all_gather samples (axis, shard, measured, fitted):")
        for s in self.samples:
            lines.append(f"    {s.axis} (n={s.n}) {s.shard_bytes >> 10} KiB: {s.seconds * 1e3:.3f} ms, "
                         f"fit {self.predicted(s) * 1e3:.3f} ms")
        return "\n".join(lines)


def _link_json(link: AxisLink) -> dict:
    return {"latency_s": link.latency_s, "bytes_per_s": link.bytes_per_s,
            "large_bytes_per_s": link.large_bytes_per_s, "large_from": link.large_from}


def _link_text(link: AxisLink) -> str:
    text = f"α = {link.latency_s * 1e6:.3g} µs, β = {link.bytes_per_s / 1e9:.3g} GB/s"
    if link.large_from is not None:
        text += f", beyond {link.large_from / 2**20:.3g} MiB sent β = {link.large_bytes_per_s / 1e9:.3g} GB/s"
    return text


def calibrate(mesh=None, repeats: int = 11, *, sizes=SIZES, matmul=MATMUL, name: str = "calibrated") -> Calibration:
    """Measure a DeviceKind named `name` and each axis's link on `mesh` (default 4×2, x and y).

    `repeats`: timed rounds (medians are kept); `sizes`: shard bytes of the all_gathers
    (at least 2); `matmul`: (rows per device, i, j) of the einsum. Returns a Calibration:
    `.device`, `.links`, `.cost_model()`; print it for a summary."""
    mesh = checks.mesh(mesh) or Mesh({"x": 4, "y": 2})
    if not (isinstance(repeats, int) and repeats >= 1):
        raise MeshIRValueError(f"calibrate: repeats must be an int >= 1, got {repeats!r}")
    sizes = tuple(int(s) for s in sizes)
    if len(set(sizes)) < 2 or min(sizes) < _ROW * 4:
        raise MeshIRValueError(f"calibrate: sizes needs 2 or more different shard sizes of >= {_ROW * 4} bytes, "
                               f"got {sizes}")
    shape = mesh.shape
    if all(n < 2 for n in shape.values()):
        raise MeshIRValueError(f"calibrate: the mesh {shape} has no axis of 2 or more devices")
    calls = {"overhead": _overhead_call(mesh), "compute": _matmul_call(mesh, *matmul)}
    gathers = {}
    for axis, n in shape.items():
        if n < 2:
            continue
        for size in sizes:
            rows = max(size // (_ROW * 4), 1)
            gathers[(axis, rows)] = calls[(axis, rows)] = _gather_call(mesh, axis, rows)
    times = {k: statistics.median(t) for k, t in interleaved_times(calls, repeats).items()}
    overhead = times["overhead"]
    flops = 2.0 * matmul[0] * matmul[1] * matmul[2]
    compute = max(times["compute"] - overhead, times["compute"] / 2)
    samples = []
    for (axis, rows), _ in gathers.items():
        n, shard = shape[axis], rows * _ROW * 4
        samples.append(Sample(axis, n, shard, ring_steps(_KIND, n), ring_bytes(_KIND, shard, n),
                              max(times[(axis, rows)] - overhead, 0.0)))
    links = {axis: _fit([s for s in samples if s.axis == axis]) for axis in dict.fromkeys(s.axis for s in samples)}
    device = DeviceKind(name, flops / compute, _fit(samples), "f32",
                        f"mi.calibrate() on mesh {shape}, {time.strftime('%Y-%m-%d')}")
    return Calibration(device, links, dict(shape), overhead, compute, flops, tuple(samples), repeats)


def _fit(samples) -> AxisLink:
    """The link of `samples`: α–β fitted on the small messages (shards up to `SMALL`, where α
    is still visible over the bytes), and, where larger ones cost more per byte, a second
    bandwidth for the bytes beyond a knee.

    Each knee L (the bytes sent of a sample at least as large as every small one's, with a
    sample above it): 1/β_large >= 1/β fitted on the bytes beyond L of the samples above it;
    the knee of least relative error over all samples wins (no knee when none does better)."""
    def error(link):
        return sum(((link.seconds(s.steps, s.bytes_sent) - s.seconds) / w) ** 2 for s, w in zip(samples, weights))

    small = [s for s in samples if s.shard_bytes <= SMALL] or list(samples)
    if len({s.bytes_sent for s in small}) < 2:
        small = list(samples)
    best = base = _fit_small(small)
    weights = _weights(samples)
    best_error = error(best)
    floor = max(s.bytes_sent for s in small)
    for knee in sorted({s.bytes_sent for s in samples if s.bytes_sent >= floor}):
        above = [(s, wt) for s, wt in zip(samples, weights) if s.bytes_sent > knee]
        if not above:
            continue
        x = np.array([(s.bytes_sent - knee) / wt for s, wt in above])
        y = np.array([(s.seconds - base.seconds(s.steps, knee)) / wt for s, wt in above])
        inv = float(x @ y / (x @ x))
        if inv <= 1.01 / base.bytes_per_s:  # no slower beyond this knee: not a knee
            continue
        link = AxisLink(base.latency_s, base.bytes_per_s, 1.0 / inv, int(knee))
        if error(link) < best_error * 0.999:
            best, best_error = link, error(link)
    return best


def _weights(samples) -> list:
    """Each sample's residual is divided by its time, but by no less than a tenth of the largest:
    a sample the overhead swallowed (t near 0 on a loaded machine) does not outweigh the
    others more than tenfold."""
    top = max(max(s.seconds for s in samples) / 10, 1e-9)
    return [max(s.seconds, top) for s in samples]


def _fit_small(samples) -> AxisLink:
    """α, 1/β >= 0 minimising Σ ((steps·α + bytes/β - t) / weight)² (relative error, `_weights`)."""
    a = np.array([[s.steps, s.bytes_sent] for s in samples], dtype=float)
    t = np.array([s.seconds for s in samples], dtype=float)
    w = 1.0 / np.array(_weights(samples))
    alpha, inv_beta = _nnls2(a * w[:, None], t * w)
    return AxisLink(float(alpha), 1.0 / max(float(inv_beta), 1e-18))


def _nnls2(a: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Non-negative least squares in two unknowns: the unconstrained optimum if it is
    non-negative, else the best with one unknown at zero (the optimum lies on a face)."""
    x = np.linalg.lstsq(a, y, rcond=None)[0]
    if (x >= 0).all():
        return float(x[0]), float(x[1])
    candidates = [np.zeros(2)]
    for j in (0, 1):
        col = a[:, j]
        if col @ col > 0:
            c = np.zeros(2)
            c[j] = max(col @ y / (col @ col), 0.0)
            candidates.append(c)
    best = min(candidates, key=lambda c: float(np.sum((a @ c - y) ** 2)))
    return float(best[0]), float(best[1])


def _runner(prog, inputs: dict):
    """A call of `prog` compiled by mi.compile, its inputs placed on the devices once."""

    exe = mi_compile(prog)
    placed = [jax.device_put(inputs[n], s) for n, s in zip(exe.signature.arg_names, exe.in_shardings)]
    return lambda: exe(*placed)


def _overhead_call(mesh: Mesh):
    axes = mesh.axis_names
    with Program("calibrate_overhead", mesh) as prog:
        x = prog.argument("x", [Dim("a", mesh.size), Dim("m", 8)], layout={"a": axes})
        prog.result(x + x, name="y")
    return _runner(prog, {"x": np.ones((mesh.size, 8), np.float32)})


def _matmul_call(mesh: Mesh, rows: int, i: int, j: int):
    b = rows * mesh.size
    with Program("calibrate_compute", mesh) as prog:
        x = prog.argument("x", [Dim("b", b), Dim("i", i)], layout={"b": mesh.axis_names})
        w = prog.argument("w", [Dim("i", i), Dim("j", j)])
        prog.result(einsum(x, w, output=["b", "j"]), name="y")
    rng = np.random.default_rng(0)
    return _runner(prog, {"x": rng.standard_normal((b, i), np.float32), "w": rng.standard_normal((i, j), np.float32)})


def _gather_call(mesh: Mesh, axis: str, rows: int):
    a = rows * mesh.shape[axis]
    with Program(f"calibrate_gather_{axis}", mesh) as prog:
        x = prog.argument("x", [Dim("a", a), Dim("m", _ROW)], layout={"a": axis})
        prog.result(all_gather(x, "a", axis), name="y")
    return _runner(prog, {"x": np.ones((a, _ROW), np.float32)})
