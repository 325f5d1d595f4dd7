"""The explanation of a compile report: per collective, why it exists and the cheapest rule
change that would remove it (`CompileReport.explain()`, `mi.explain`)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from meshir.dialect import MeshIRError, MeshIRValueError
from meshir.dialect.modes import EXPLICIT
from meshir.dialect.tensor_type import format_axes
from meshir.transforms.collectives.records import CollectiveRecord

from meshir.api.compilation._alternatives import Alternative, cheapest_alternatives, size_text


@dataclass(frozen=True)
class Explanation:
    """One collective (`record`: kind, axes, bytes, location, provenance) and the cheapest
    rule change that removes it (None: no rule change does)."""

    record: CollectiveRecord
    alternative: Alternative | None

    def row(self) -> tuple[str, ...]:
        r, why = self.record, self.record.provenance
        because = "; ".join(dict.fromkeys(f"{s.layout}: {s.text}" for s in why.sources)) if why else ""
        return (r.kind, format_axes(r.axes) if r.axes else "", ", ".join(r.dims), size_text(r.bytes_per_device) + f" {r.element_type}",
                f"{why.needed_by if why else '?'} @ {_short(r.location)}", because or (why.reason if why else ""),
                str(self.alternative) if self.alternative else "none: no rule change removes it")


class Explanations(tuple):
    """The explanations of a program's collectives, in program order; str() is the table."""

    HEADER = ("collective", "axes", "dims", "bytes/device", "needed by", "because", "cheapest alternative")

    def __str__(self) -> str:
        if not self:
            return "no collectives"
        rows = [self.HEADER] + [e.row() for e in self]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.HEADER) - 1)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows)


def explain_report(report, show: bool = True) -> Explanations:
    """The explanations of a CompileReport's collectives (its `explain()`)."""
    if report.mode != EXPLICIT:
        raise MeshIRValueError("explain: in gspmd mode XLA's partitioner inserts the collectives, which MeshIR "
                               "cannot explain; compile with mode='explicit'")
    if report.source is None:
        raise MeshIRError("explain: the compile report does not keep the program it was compiled from")
    records = report.collectives
    result = Explanations(Explanation(r, a) for r, a in zip(records, cheapest_alternatives(report)))
    if show:
        print(result)
    return result


def _short(location: str) -> str:
    """`file:line` relative to the working directory when under it (the column dropped)."""
    parts = location.rsplit(":", 2)
    if len(parts) != 3:
        return location
    path = parts[0]
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        path = rel if not rel.startswith("..") else path
    return f"{path}:{parts[1]}"
