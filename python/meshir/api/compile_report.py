"""The compile report: every value's layout and every collective with the bytes it moves and
why it exists (its provenance; the cheapest rule change that would remove it is computed
when asked, by `explain()`)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from meshir._jax_private import ir
from meshir.dialect.diagnostics import format_location
from meshir.dialect.modes import EXPLICIT
from meshir.dialect.ops import ScanOp, is_collective
from meshir.dialect.provenance import Provenance, collective_dims, provenance_of
from meshir.dialect.signature import defined_functions, function_name
from meshir.dialect.tensor_type import TensorType, format_axes
from meshir.transforms.cost_model import HALO_EXCHANGE

from .propagation import layout_table



@dataclass(frozen=True)
class CollectiveRecord:
    """One collective of a partitioned program."""

    function: str
    value: str
    kind: str
    axes: tuple[str, ...]
    detail: str
    bytes_per_device: int
    operand: str
    #: Where the op that needs it was written (`file:line:col`), and why it exists (None for
    #: a module compiled without `explain`).
    location: str = ""
    provenance: Provenance | None = None
    #: The named dims it changes (an all_reduce: the dims whose split left the sum pending).
    dims: tuple[str, ...] = ()
    #: How many times one call runs it: the product of the lengths of the scans around it;
    #: None inside a while loop (its trip count is known only when it runs).
    repeats: int | None = 1

    @property
    def element_type(self) -> str:
        """The element type it moves (a mixed-precision policy halves bf16's bytes)."""
        return TensorType.parse(self.operand).element_type


def collectives_of(module) -> list[CollectiveRecord]:
    """Every collective of every function, in program order, and every halo exchange (an op
    along a split dim that records the bytes it sends, kind `halo_exchange`)."""
    return [record for _, record in collective_ops(module)]


def collective_ops(module):
    """(op, CollectiveRecord) of every collective and halo exchange, in program order (those
    in a loop's body where the loop is)."""
    for fn in defined_functions(module):
        for op, repeats in _ops_within(fn.regions[0].blocks[0], 1):
            attrs = op.operation.attributes
            if not is_collective(op):
                if "bytes_per_device" in attrs:
                    yield op, replace(_halo_record(fn, op), repeats=repeats)
                continue
            axes = tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attrs["axes"])) if "axes" in attrs else ()
            detail = ", ".join(f"{k}={ir.StringAttr(attrs[k]).value}" for k in ("reduction", "dim", "src_dim", "dst_dim")
                               if k in attrs)
            nbytes = ir.IntegerAttr(attrs["bytes_per_device"]).value if "bytes_per_device" in attrs else 0
            why = provenance_of(op)
            yield op, CollectiveRecord(function_name(fn), op.result.get_name(), op.kind(), axes, detail,
                                       nbytes, str(TensorType.from_mlir(op.operation.operands[0].type)),
                                       format_location(op.location), why, collective_dims(op, why), repeats)


def _ops_within(block, repeats: int | None):
    """(op, how many times it runs per call) for the ops of `block` and of the loop bodies in it."""
    for op in block.operations:
        yield op, repeats
        if op.operation.regions:
            inner = None if repeats is None or not isinstance(op, ScanOp) else \
                repeats * ir.IntegerAttr(op.operation.attributes["length"]).value
            for region in op.operation.regions:
                for b in region.blocks:
                    yield from _ops_within(b, inner)


def _halo_record(fn, op) -> CollectiveRecord:
    """The halo exchange of `op` (a shift along a split dim): along its halo dims' axes."""
    operand = TensorType.from_mlir(op.operation.operands[0].type)
    halos = op.halos()
    axes = tuple(a for d in halos for a in operand.dim(d).axes or ())
    detail = ", ".join([op.short_name] + [f"dim={d}, rows={lo}+{hi}" for d, (lo, hi) in halos.items()])
    why = provenance_of(op)
    return CollectiveRecord(function_name(fn), op.result.get_name(), HALO_EXCHANGE, axes, detail,
                            ir.IntegerAttr(op.operation.attributes["bytes_per_device"]).value, str(operand),
                            format_location(op.location), why, tuple(halos))


@dataclass
class CompileReport:
    """What compilation decided: layouts of every value, collectives and their bytes.
    `source`, `rules`, `cost_model`: what was compiled, for `explain()`'s alternatives."""

    partitioned_module: object
    mode: str = EXPLICIT  # gspmd: the module is only propagated, XLA inserts the collectives
    source: object = None
    rules: object = None
    cost_model: object = None
    function: str | None = None
    #: XLA's memory_analysis per device after compiling (argument, output, temp, alias,
    #: total), set by `mi.compile`; None before or when PJRT gives none.
    xla_memory: dict | None = None

    def explain(self, show: bool = True):
        """Why each collective exists and the cheapest rule change that would remove it
        (api/explain.py); prints the table unless `show=False`."""
        from .explain import explain_report

        return explain_report(self, show)

    @property
    def memory(self):
        """MeshIR's estimate of memory per device (transforms/memory_estimate.py), from the
        partitioned program's liveness, before XLA: `MemoryEstimate` with `total`,
        `categories` (parameters, optimizer_state, gradients, activations for a train step)
        and `largest`; None in gspmd mode (XLA partitions, so there are no shards to count)."""
        if self.mode != EXPLICIT:
            return None
        from meshir.transforms.cost_model import BYTES

        return BYTES.memory(self.partitioned_module, self.function)

    @property
    def collectives(self) -> list[CollectiveRecord]:
        return collectives_of(self.partitioned_module)

    @property
    def bytes_by_element_type(self) -> dict[str, int]:
        """Bytes one call sends per device, by the element type moved (what a precision
        policy's `compute` and `reduce` types cost)."""
        out: dict[str, int] = {}
        for c in self.collectives:
            out[c.element_type] = out.get(c.element_type, 0) + c.bytes_per_device * (c.repeats or 1)
        return dict(sorted(out.items()))

    @property
    def total_bytes_per_device(self) -> int:
        """Bytes one call sends per device: a collective in a scan's body counts once per
        iteration; one in a while loop's, once (its trip count is not known here)."""
        return sum(c.bytes_per_device * (c.repeats or 1) for c in self.collectives)

    def __str__(self) -> str:
        lines = ["layouts:", layout_table(self.partitioned_module), "", "collectives:"]
        records = self.collectives
        if not records:
            lines.append("  none" if self.mode == EXPLICIT else
                         "  inserted by XLA's partitioner (gspmd mode): see Executable.compiled_hlo_text()")
        rows = [("value", "collective", "axes", "detail", "type", "bytes/device")] + [
            (c.value, c.kind, format_axes(c.axes) if c.axes else "", c.detail, c.element_type, str(c.bytes_per_device)
             + ("" if c.repeats == 1 else f" x{c.repeats if c.repeats else '?'} (in a loop)")) for c in records
        ]
        if records:
            widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
            lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
            by_type = self.bytes_by_element_type
            split = f" ({', '.join(f'{t} {n}' for t, n in by_type.items())})" if len(by_type) > 1 else ""
            lines.append(f"  total bytes sent per device: {self.total_bytes_per_device}{split}")
        estimate = self.memory
        if estimate is not None:
            lines += ["", "memory per device (MeshIR's estimate, before XLA):"]
            lines += [f"  {k.replace('_', ' ')}: {v}" for k, v in estimate.categories.items()]
            lines.append(f"  total: {estimate.total}")
        if self.xla_memory is not None:
            x = self.xla_memory
            ratio = f" (estimate / XLA = {estimate.total / x['total']:.2f})" if estimate is not None and x["total"] else ""
            lines.append(f"  XLA: argument {x['argument']}, output {x['output']}, temp {x['temp']}, "
                         f"alias {x['alias']}, total {x['total']}{ratio}")
        return "\n".join(lines)
