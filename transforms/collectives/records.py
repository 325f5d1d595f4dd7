"""The collectives of a partitioned module, as records: kind, axes, bytes per device, where the
op was written and why it exists (its provenance), how many times a call runs it. The compile
report (`exe.compile_report.collectives`) shows them; auto-layout measures candidates with them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from meshir._jax_private import ir
from meshir.dialect.diagnostics import format_location
from meshir.dialect.ops import ScanOp, is_collective
from meshir.dialect.provenance import Provenance, collective_dims, provenance_of
from meshir.dialect.signature import defined_functions, function_name
from meshir.dialect.tensor_type import TensorType
from meshir.transforms.analysis.cost_model import HALO_EXCHANGE

#: What a halo exchange is on the wire, and what XLA's HLO and the docs call it.
PERMUTE = "collective_permute"


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
    #: A halo exchange: an op's own collective permutes of boundary rows (a shift along a
    #: split dim), priced by its bytes alone (cost_model.HALO_EXCHANGE).
    halo: bool = False

    @property
    def priced_as(self) -> str:
        """The kind the cost model prices it as."""
        return HALO_EXCHANGE if self.halo else self.kind

    @property
    def element_type(self) -> str:
        """The element type it moves (a mixed-precision policy halves bf16's bytes)."""
        return TensorType.parse(self.operand).element_type


def collectives_of(module) -> list[CollectiveRecord]:
    """Every collective of every function, in program order, and every halo exchange (an op
    along a split dim that records the bytes it sends: kind `collective_permute`, `halo`)."""
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
    """The halo exchange of `op` (a shift along a split dim): along its halo dims' axes; or
    the all_gather of what an op along a split dim merges (a selection's candidates, a
    scan's block totals)."""
    operand = TensorType.from_mlir(op.operation.operands[0].type)
    dims = tuple(op.merged_dims())
    if dims:
        axes = tuple(a for d in dims for a in operand.dim(d).axes or ())
        return CollectiveRecord(function_name(fn), op.operation.results[0].get_name(),
                                op.MERGE_KIND, axes,
                                f"{op.short_name} {op.MERGED}, dim={', '.join(dims)}",
                                ir.IntegerAttr(op.operation.attributes["bytes_per_device"]).value, str(operand),
                                format_location(op.location), provenance_of(op), dims)
    halos = op.halos()
    axes = tuple(a for d in halos for a in operand.dim(d).axes or ())
    detail = ", ".join([op.short_name] + [f"dim={d}, rows={lo}+{hi}" for d, (lo, hi) in halos.items()])
    why = provenance_of(op)
    return CollectiveRecord(function_name(fn), op.result.get_name(), PERMUTE, axes, f"halo exchange: {detail}",
                            ir.IntegerAttr(op.operation.attributes["bytes_per_device"]).value, str(operand),
                            format_location(op.location), why, tuple(halos), halo=True)
