"""The provenance of what collective insertion emits, where propagation left none.

Propagation carries why on reshards and ops (propagation/layout_sources.py); these build the
rest: a user's `mtf.shard`, a collective written by hand, a pending reduction completed for a
consumer, and the remark `explain=true` reports for each collective.
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.diagnostics import Diagnostic, format_location
from meshir.dialect.ops import ShardOp
from meshir.dialect.provenance import OP, SHARD, WRITTEN, LayoutSource, Provenance, collective_dims
from meshir.dialect.tensor_type import TensorType, format_axes

from ..analysis.cost_model import HALO_EXCHANGE


def _changed(have: TensorType, need: TensorType) -> tuple[str, ...]:
    return tuple(d.name for d, n in zip(have.dims, need.dims) if (d.axes or ()) != (n.axes or ()))


def shard_provenance(op, have: TensorType, need: TensorType, reshard: bool) -> Provenance:
    """A user's `mtf.shard` constraint (or a reshard that carries no reason: IR written after
    propagation by hand)."""
    dims = _changed(have, need)
    where = format_location(op.location)
    if reshard:
        return Provenance(ShardOp.OPERATION_NAME, dims,
                          "a reshard left by mtf-propagate-sharding (its reason was not recorded)")
    text, reason = _shard_statement(op, where)
    sources = tuple(LayoutSource(d, need.dim(d).axes or (), SHARD, text, where=where) for d in dims)
    return Provenance(ShardOp.OPERATION_NAME, dims, reason, sources)


def _shard_statement(op, where: str) -> tuple[str, str]:
    """(what states the layout, why it changes here) for a user's constraint, an mi.reshard
    (a cut) or a boundary of weight-update sharding."""
    attrs = op.operation.attributes
    if "param" in attrs:
        param = ir.StringAttr(attrs["param"]).value
        return (f"weight-update sharding of parameter '{param}' (mi.train_step at {where})",
                f"weight-update sharding moves '{param}' (or its gradient or state) between its compute and "
                "update layouts")
    if "cut" in attrs:
        return f"mi.reshard at {where}", "an mi.reshard changes the layout here"
    return f"mtf.shard at {where}", "an mtf.shard constrains the layout"


def written_provenance(op, dims) -> Provenance:
    """A collective the program wrote itself."""
    where = format_location(op.location)
    sources = tuple(LayoutSource(d, (), WRITTEN, f"{op.operation.name} written at {where}", where=where) for d in dims)
    return Provenance(op.operation.name, tuple(dims), "the program writes this collective", sources)


def completed_reduction(pending: Provenance | None, needed_by: str, reason: str, source: TensorType) -> Provenance:
    """Why a pending reduction is completed: what made it pending (propagation's record, when
    there is one), and the `reason` `needed_by` cannot leave it pending."""
    if pending is None:
        return Provenance(needed_by, (), f"{reason}; the value is pending over {format_axes(source.partial)}",
                          (LayoutSource("", (), OP, "a pending value the input IR wrote"),))
    return Provenance(needed_by, pending.dims, f"{reason}; {pending.reason}", pending.sources)


def whole_dim(op, dim: str | None, why: Provenance | None, final: TensorType | None = None) -> Provenance:
    """Why a dim an op computes along is gathered (`dim`), or its result split again after to
    `final`; `why`: the statements propagation recorded behind those dims' splits."""
    name = op.operation.name
    if why is None:
        why = Provenance(name, (dim,) if dim else tuple(op.whole_dims()), "")
    if dim is not None:
        return why.with_need(name, f"{name} computes along '{dim}', which must be whole on every device")
    return why.with_need(name, f"{name} computed {', '.join(map(repr, why.dims))} whole; its result is laid out "
                               f"{final}")


def halo_exchange(op, dims: tuple[str, ...], why: Provenance | None) -> Provenance:
    """Why an op along split dims (a shift) exchanges boundary rows with its neighbours:
    those dims are split (`why`: the statements that split them) and it needs rows of the
    neighbouring blocks."""
    name = op.operation.name
    sources = tuple(s for s in why.sources if s.dim in dims) if why else ()
    return Provenance(name, dims, f"{name} along split {', '.join(map(repr, dims))} needs boundary rows of the "
                                  f"neighbouring blocks (a halo exchange, not a gather)", sources)


def remark(op, nbytes: int, why: Provenance, kind: str | None = None) -> Diagnostic:
    """What `explain=true` reports at a collective's (or a halo exchange's: `kind`) location."""
    if kind is None:
        kind = op.kind()
    axes = op.attr("axes") if "axes" in op.operation.attributes else ()
    over = f" over {format_axes(tuple(axes))}" if axes else ""
    dims = ", ".join(why.dims if kind == HALO_EXCHANGE else collective_dims(op, why)) or "none"
    if kind == HALO_EXCHANGE:
        kind = "collective_permute (a halo exchange)"
    return Diagnostic(op.location, f"{kind}{over} ({nbytes} bytes/device) for dims {dims}, needed by {why.needed_by}: "
                                   f"{why.because}", "remark")
