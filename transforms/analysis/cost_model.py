"""The one cost model (DESIGN.md §7): what a collective costs, per device, in bytes and in time.

The reshard planner, `mtf-insert-collectives` (each collective's `bytes_per_device`) and the
reports call only this module; nothing else estimates cost.

**Bytes** (ring algorithms over a group of n devices, from the operand's shard; the formula
of docs/partitioning.md, which each collective class states as its `ring_bytes`,
dialect/ops/collectives.py): an all_gather sends (n-1) shards, an all_reduce 2(n-1)/n of the
shard, a reduce_scatter and an all_to_all (n-1)/n; all_slice sends nothing; a
collective_permute sends the whole shard; a halo exchange (a shift along a split dim) sends
only the boundary rows its neighbours read (`halo_bytes`).

**Time** (α–β, per mesh axis): a collective over axes whose links have latency α and
bandwidth β takes `steps·α + bytes/β` (a link may have a second, large-message β for the
bytes beyond a threshold: `AxisLink.bytes_seconds`), with the ring's step count (the class's
`ring_steps`: n-1 for all_gather, reduce_scatter and all_to_all, 2(n-1) for all_reduce, 1 for
a permute, none for all_slice or a halo exchange). Over several axes it
goes at its slowest link (largest α, smallest β). A user who says that `x` is slow
(inter-host) and `y` fast gets plans that may send more bytes over `y` to send fewer over
`x`: `CostModel(objective="time", links={"x": AxisLink(...), ...})`.

**Devices** (transforms/analysis/device_kinds.py, one documented table: `cpu-virtual`, `tpu-v3`,
`tpu-v4`, `a100`, `h100`): `CostModel(device="h100")` or `CostModel(device=DeviceKind(...))`
gives every axis the device's link unless `links` names the axis (an inter-host axis, say),
so an axis's link is, first to last: its entry in `links`, the device's `link`,
`DEFAULT_LINK`. Without a device (the default) nothing changes. `mi.calibrate()`
(python/meshir/api/calibration/calibrate.py) measures a DeviceKind and per-axis links on the machine it
runs on, with micro-benchmarks of its own.

**Step time** (with a device): `compute_seconds(flops) = flops / device.flops_per_s` (FLOPs per
device, at the device's peak: no utilisation factor), and `step_seconds(flops, comm) =
compute_seconds(flops) + comm`, where `comm` is the seconds of the step's collectives (the
sum of their `Cost.seconds`). Compute and communication are added, never overlapped: XLA
can overlap a collective with independent compute, but how much depends on the schedule it
picks, which MeshIR does not see before compiling; the sum is an upper bound that orders
plans by what they must do (docs/decisions.md, "Device kinds and step time").

`Cost` has slots for FLOPs and memory per device (`flops_per_device`, `memory_per_device`); a
collective has neither. Memory per device of a whole program is `CostModel.memory`
(transforms/analysis/memory_estimate.py: liveness over the partitioned function): a constraint on a
layout (a budget it must fit), not a term of its time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from meshir.dialect.diagnostics import MeshIRValueError
from meshir.dialect.ops import OP_CLASSES
from meshir.dialect.tensor_type import TensorType

from .axis_link import DEFAULT_LINK, AxisLink
from .device_kinds import DeviceKind, device_kind
from .memory_estimate import estimate_memory, shard_bytes

OBJECTIVES = ("bytes", "time")


@dataclass(frozen=True, order=True)
class Cost:
    """What a sequence of collectives costs per device. Ordered by bytes, then count."""

    bytes_per_device: int = 0
    collectives: int = 0
    seconds: float = 0.0
    #: Slots for the compute and memory estimates (paper-scale and auto-layout issues).
    flops_per_device: int | None = field(default=None, compare=False)
    memory_per_device: int | None = field(default=None, compare=False)

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(self.bytes_per_device + other.bytes_per_device, self.collectives + other.collectives,
                    self.seconds + other.seconds)


def group_size(axes, mesh_shape: dict[str, int]) -> int:
    return math.prod(mesh_shape[a] for a in axes)


#: The collective op classes by kind (`_CollectiveOp.kind`: "all_reduce", ...).
COLLECTIVES = {cls.kind(): cls for cls in OP_CLASSES.values() if cls.IS_COLLECTIVE}
#: How the cost model prices an op's own exchange of rows with its neighbours (a shift along
#: a split dim; dialect/halo.py), which the compile report lists as a `collective_permute`
#: (what it lowers to, and XLA's name) marked `halo`: not a collective op; its bytes are
#: `halo_bytes`, and its time their bandwidth term alone (no ring steps).
HALO_EXCHANGE = "halo_exchange"


def collective_class(kind: str) -> type:
    """The collective op class of `kind`: its op name without the dialect ("all_reduce") or
    HLO's dashed spelling ("all-reduce"); MeshIRValueError for any other."""
    cls = COLLECTIVES.get(kind.replace("-", "_"))
    if cls is None:
        raise MeshIRValueError(f"unknown collective kind {kind!r} (expected one of {', '.join(sorted(COLLECTIVES))})")
    return cls


def ring_bytes(kind: str, shard: int, n: int) -> int:
    """Bytes one device sends for collective `kind` (all_reduce, all_gather, ...; HLO's
    dashed spellings too) over a group of `n` devices, its operand shard being `shard` bytes."""
    return collective_class(kind).ring_bytes(shard, n)


def ring_steps(kind: str, n: int) -> int:
    """Latency-bound steps of collective `kind` over `n` devices (a ring); none for a halo
    exchange."""
    return 0 if kind == HALO_EXCHANGE else collective_class(kind).ring_steps(n)


def collective_bytes(kind: str, operand: TensorType, axes, mesh_shape: dict[str, int]) -> int:
    """Bytes sent per device by collective `kind` over `axes` applied to `operand`."""
    return ring_bytes(kind, shard_bytes(operand, mesh_shape), group_size(axes, mesh_shape))


def halo_bytes(operand: TensorType, dim: str, low: int, high: int, mesh_shape: dict[str, int]) -> int:
    """Bytes sent per device by a halo exchange along `dim` of `operand`: its last `low` rows
    to the next block and its first `high` rows to the previous one, each row the rest of
    the shard, sent once (a device at an end of the dim without wrap-around sends less; a dim
    in one block sends nothing)."""
    if group_size(operand.dim(dim).axes or (), mesh_shape) == 1:
        return 0
    local = operand.local_shape(mesh_shape)
    row = math.prod(n for i, n in enumerate(local) if i != operand.index(dim))
    return (low + high) * row * operand.dtype.itemsize


@dataclass(frozen=True)
class CostModel:
    """Prices collectives; `objective` says what the planner minimises ("bytes", the default,
    or "time" by the α–β `links` per mesh axis). Ties go to fewer collectives. `device`: a
    device kind (a name from transforms/analysis/device_kinds.py, or a DeviceKind) whose link the
    axes without a `links` entry get, and whose FLOP rate `compute_seconds` uses; None (the
    default) leaves both out."""

    objective: str = "bytes"
    links: tuple[tuple[str, AxisLink], ...] = ()
    device: "DeviceKind | None" = None

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise MeshIRValueError(f"cost objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if isinstance(self.links, dict):
            object.__setattr__(self, "links", tuple(sorted(self.links.items())))
        if self.device is not None:
            object.__setattr__(self, "device", device_kind(self.device))

    @staticmethod
    def from_options(objective: str, links, device: str = "") -> "CostModel":
        """From pass options: `links` as `axis:latency_s:bytes_per_s[:large_bytes_per_s:large_from]`
        strings; `device` a device-kind name, name:flops_per_s:latency_s:bytes_per_s[:...], or '' for none."""
        parsed = {}
        for text in links:
            parts = text.split(":")
            try:
                axis = parts[0]
                if not axis:
                    raise ValueError
                link = AxisLink.parse(parts[1:])
            except (ValueError, IndexError):
                raise MeshIRValueError(f"a link is axis:latency_s:bytes_per_s[:large_bytes_per_s:large_from] "
                                       f"(e.g. x:1e-5:1e9), got '{text}'") from None
            parsed[axis] = link
        return CostModel(objective, parsed, device or None)

    def link(self, axis: str) -> AxisLink:
        """The link of mesh `axis`: its `links` entry, else the device's link, else DEFAULT_LINK."""
        return dict(self.links).get(axis, self.default_link())

    def default_link(self) -> AxisLink:
        """The link of an axis `links` does not name: the device's, or DEFAULT_LINK."""
        return self.device.link if self.device is not None else DEFAULT_LINK

    def compute_seconds(self, flops_per_device: float) -> float:
        """Seconds to compute `flops_per_device` FLOPs at the device's rate (its peak)."""
        if self.device is None:
            raise MeshIRValueError("compute_seconds needs a device: CostModel(device=...) with a kind from "
                                   "transforms/analysis/device_kinds.py or mi.calibrate()")
        if not flops_per_device >= 0:
            raise MeshIRValueError(f"FLOPs per device must be >= 0, got {flops_per_device!r}")
        return flops_per_device / self.device.flops_per_s

    def step_seconds(self, flops_per_device: float, collectives_seconds) -> float:
        """Seconds of a step: compute plus communication, added (no overlap). The
        communication is seconds, or the Costs of the step's collectives (their sum)."""
        if isinstance(collectives_seconds, Cost):
            collectives_seconds = collectives_seconds.seconds
        elif not isinstance(collectives_seconds, (int, float)):
            collectives_seconds = sum(c.seconds for c in collectives_seconds)
        if not collectives_seconds >= 0:
            raise MeshIRValueError(f"seconds of collectives must be >= 0, got {collectives_seconds!r}")
        return self.compute_seconds(flops_per_device) + collectives_seconds

    def collective(self, kind: str, operand: TensorType, axes, mesh_shape: dict[str, int]) -> Cost:
        """The cost of one collective `kind` over `axes` on `operand`."""
        return self.price(kind, shard_bytes(operand, mesh_shape), axes, mesh_shape)

    def price(self, kind: str, shard: int, axes, mesh_shape: dict[str, int]) -> Cost:
        """The cost of one collective `kind` over `axes` whose operand shard is `shard` bytes."""
        n, op = group_size(axes, mesh_shape), collective_class(kind)
        sent = op.ring_bytes(shard, n)
        return Cost(sent, 1, self._seconds(op.ring_steps(n), sent, axes))

    def sent_seconds(self, kind: str, sent: int, axes, mesh_shape: dict[str, int]) -> float:
        """α–β seconds of collective `kind` over `axes` sending `sent` bytes per device: at its
        slowest link (the largest latency, the slowest bytes term)."""
        return self._seconds(ring_steps(kind, group_size(axes, mesh_shape)), sent, axes)

    def _seconds(self, steps: int, sent: int, axes) -> float:
        links = [self.link(a) for a in axes] or [self.default_link()]
        return steps * max(k.latency_s for k in links) + max(k.bytes_seconds(sent) for k in links)

    def memory(self, module, function: str | None = None):
        """Memory per device of a partitioned module's entry function, before XLA: a
        `MemoryEstimate` (transforms/analysis/memory_estimate.py; `Cost.memory_per_device` is its total)."""
        return estimate_memory(module, function)

    def key(self, cost: Cost) -> tuple:
        """What the planner compares: the objective first, then the number of collectives."""
        if self.objective == "time":
            return (cost.seconds, cost.bytes_per_device, cost.collectives)
        return (cost.bytes_per_device, cost.collectives)


BYTES = CostModel()
