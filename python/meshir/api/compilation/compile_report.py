"""The compile report: every value's layout and every collective with the bytes it moves and
why it exists (its provenance; the cheapest rule change that would remove it is computed
when asked, by `explain()`)."""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.diagnostics import format_location
from meshir.dialect.modes import EXPLICIT
from meshir.dialect.ops import DotProductAttentionGradOp, DotProductAttentionOp
from meshir.dialect.signature import defined_functions
from meshir.dialect.walk import ops_within
from meshir.dialect.tensor_type import format_axes
from meshir.transforms.collectives.records import CollectiveRecord, collective_ops, collectives_of  # noqa: F401
from meshir.transforms.analysis.cost_model import BYTES

from meshir.api.compilation.explanations import explain_report
from meshir.api.compilation.propagation import layout_table


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
    #: XLA's cost analysis per device (`flops`, `bytes_accessed`, on TPU `optimal_seconds`, ...),
    #: set by `mi.compile` (`compile.xla_cost`); None before or when XLA gives none.
    xla_cost: dict | None = None

    def explain(self, show: bool = True):
        """Why each collective exists and the cheapest rule change that would remove it
        (api/compilation/explanations.py); prints the table unless `show=False`."""
        return explain_report(self, show)

    @property
    def memory(self):
        """MeshIR's estimate of memory per device (transforms/analysis/memory_estimate.py), from the
        partitioned program's liveness, before XLA: `MemoryEstimate` with `total`,
        `categories` (parameters, optimizer_state, gradients, activations for a train step)
        and `largest`; None in gspmd mode (XLA partitions, so there are no shards to count)."""
        if self.mode != EXPLICIT:
            return None
        return BYTES.memory(self.partitioned_module, self.function)

    @property
    def collectives(self) -> list[CollectiveRecord]:
        return collectives_of(self.partitioned_module)

    @property
    def attention(self) -> list[str]:
        """The form each attention op (and gradient) got, one line each, in program order:
        where, "blockwise" with its keys per block and blocks, or "xla" (einsum, softmax, einsum)."""
        lines = []
        for fn in defined_functions(self.partitioned_module):
            for op in ops_within(fn.regions[0].blocks[0]):
                if not isinstance(op, (DotProductAttentionOp, DotProductAttentionGradOp)):
                    continue
                block, blocks = op.key_blocks()
                form = ("xla (einsum, softmax, einsum)" if op.attr("implementation") == "xla" else
                        f"blockwise, {block} keys per block, {blocks} blocks")
                kind = "gradient" if isinstance(op, DotProductAttentionGradOp) else "attention"
                lines.append(f"{kind} at {format_location(op.location)}: {form}")
        return lines

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
        if self.attention:
            lines += ["", "attention:", *(f"  {line}" for line in self.attention)]
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
        if self.xla_cost is not None and "optimal_seconds" in self.xla_cost:  # XLA:TPU's own estimate
            c = self.xla_cost
            lines.append(f"XLA cost per device: {c.get('flops', 0):.4g} flops, {c.get('bytes_accessed', 0):.4g} bytes "
                         f"accessed, {c['optimal_seconds'] * 1e3:.4g} ms (XLA's optimal_seconds)")
        return "\n".join(lines)
