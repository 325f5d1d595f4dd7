"""Why a collective exists: the record `mtf-insert-collectives{explain=true}` writes on it.

A collective is there because two layouts of some dims disagree at an op: the layout a value
has and the one an op needs, or a pending sum that an op cannot take. `Provenance` names the
op that needs the collective, the dims it changes, what disagrees (`reason`) and, per side,
the statement that decided the layout (`LayoutSource`: a layout rule, a written layout, an
`mtf.shard`, or the op itself). On the op it is the discardable dictionary attribute
`mtf.provenance`, which mtf-canonicalize ignores when it merges equal collectives; propagation
hands reasons to collective insertion in the same form, as location metadata
(`carried` / `with_carried`), which no printed IR and no lowering sees.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from . import attribute_names

from .tensor_type import format_axes

PROVENANCE_ATTR = attribute_names.PROVENANCE
#: Location metadata keys: a reshard's provenance (on `mtf.shard`); on an op, the reduction
#: it leaves pending and the split dims it needs whole. Collective insertion reads and
#: removes them.
RESHARD_KEY, PENDING_KEY, WHOLE_KEY = "mtf.reshard", "mtf.pending", "mtf.whole"
CARRIED_KEYS = (RESHARD_KEY, PENDING_KEY, WHOLE_KEY)

#: LayoutSource kinds: what can decide a dim's layout.
RULE, WRITTEN, SHARD, OP, DEFAULT = "rule", "written", "shard", "op", "default"


@dataclass(frozen=True)
class LayoutSource:
    """Who decided one side's layout of one dim: `kind` (RULE, WRITTEN on a type, user
    SHARD, the OP's own need, or DEFAULT: nothing reached it), readable `text`, the rule's dim
    name for a rule (a renamed rule: the name it was written for), and `where` the statement
    was made (`file:line:col`, '' for rules given at compile time)."""

    dim: str
    axes: tuple[str, ...]
    kind: str
    text: str
    rule: str = ""
    where: str = ""

    @property
    def layout(self) -> str:
        return f"{self.dim}@{format_axes(self.axes)}"


@dataclass(frozen=True)
class Provenance:
    """Why one collective exists: the op that needs it, the dims it changes (for a pending
    sum: the dims contracted while split), what disagrees, and the sources of each side."""

    needed_by: str
    dims: tuple[str, ...]
    reason: str
    sources: tuple[LayoutSource, ...] = ()

    @property
    def rules(self) -> tuple[str, ...]:
        """The layout rules (dim names) that decided a side, in order, once each."""
        return tuple(dict.fromkeys(s.rule for s in self.sources if s.kind == RULE))

    @property
    def because(self) -> str:
        """One readable sentence: the reason and its sources."""
        sources = "; ".join(f"{s.layout} by {s.text}" for s in self.sources)
        return f"{self.reason} ({sources})" if sources else self.reason

    @staticmethod
    def merged(provenances) -> "Provenance | None":
        """One record for a value several records explain (a pending sum made of pending
        sums): dims, reasons and sources of each, once each; None when there is none."""
        unique = list(dict.fromkeys(p for p in provenances if p is not None))
        if len(unique) <= 1:
            return unique[0] if unique else None
        return Provenance(unique[0].needed_by, tuple(dict.fromkeys(d for p in unique for d in p.dims)),
                          "; ".join(dict.fromkeys(p.reason for p in unique)),
                          tuple(dict.fromkeys(s for p in unique for s in p.sources)))

    def with_need(self, needed_by: str, reason: str) -> "Provenance":
        return Provenance(needed_by, self.dims, reason, self.sources)

    # -- attribute form ------------------------------------------------------------------------
    def to_attribute(self) -> ir.Attribute:
        """The dictionary attribute (one parse: cheaper than building it piece by piece)."""
        return ir.Attribute.parse(self.attribute_text())

    def attribute_text(self) -> str:
        sources = ", ".join(
            "{" + ", ".join(f"{k} = {_quote(v)}" for k, v in (
                ("dim", s.dim), ("axes", ",".join(s.axes)), ("kind", s.kind), ("text", s.text), ("rule", s.rule),
                ("where", s.where))) + "}"
            for s in self.sources)
        return (f"{{needed_by = {_quote(self.needed_by)}, dims = [{', '.join(map(_quote, self.dims))}], "
                f"reason = {_quote(self.reason)}, sources = [{sources}]}}")

    @staticmethod
    def from_attribute(attr) -> "Provenance":
        d = ir.DictAttr(attr)
        sources = []
        for s in ir.ArrayAttr(d["sources"]):
            s = ir.DictAttr(s)
            text = {k: ir.StringAttr(s[k]).value for k in ("dim", "axes", "kind", "text", "rule", "where")}
            axes = tuple(a for a in text.pop("axes").split(",") if a)
            sources.append(LayoutSource(axes=axes, **text))
        return Provenance(ir.StringAttr(d["needed_by"]).value, tuple(ir.StringAttr(x).value for x in ir.ArrayAttr(d["dims"])),
                          ir.StringAttr(d["reason"]).value, tuple(sources))


def provenance_of(op) -> Provenance | None:
    """The provenance recorded on a collective, None when it has none."""
    attrs = op.operation.attributes
    return Provenance.from_attribute(attrs[PROVENANCE_ATTR]) if PROVENANCE_ATTR in attrs else None


def collective_dims(op, provenance: Provenance | None) -> tuple[str, ...]:
    """The named dims a collective changes; for one that only completes a reduction, the
    dims its provenance says were reduced over while split."""
    return tuple(op.changed_dims()) or (provenance.dims if provenance else ())


# -- carried on locations, from propagation to collective insertion ------------------------------
def with_carried(loc, provenances: dict[str, Provenance]):
    """`loc` carrying `provenances` by key (a fused location with metadata)."""
    items = ", ".join(f"{_quote(k)} = {p.attribute_text()}" for k, p in provenances.items())
    return ir.Location.fused([loc], metadata=ir.Attribute.parse("{" + items + "}"))


def carried(loc) -> tuple[object, dict[str, Provenance]]:
    """(the location without what it carries, the Provenances it carries by key)."""
    if not isinstance(loc, ir.FusedLoc) or loc.metadata is None:
        return loc, {}
    try:
        metadata = ir.DictAttr(loc.metadata)
    except ValueError:
        return loc, {}
    found = {k: Provenance.from_attribute(metadata[k]) for k in CARRIED_KEYS if k in metadata}
    if not found:
        return loc, {}
    inner = loc.locations
    return (inner[0] if len(inner) == 1 else ir.Location.fused(inner)), found


def _quote(text: str) -> str:
    """An MLIR string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
