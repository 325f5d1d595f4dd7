"""`explain`: why each collective of a compiled program exists, and what would remove it.

    mi.explain(prog, layout={"batch": "x", "d_ff": "y"})   # compiles (no XLA), prints the table
    exe.explain()                                          # an Executable: what it runs

One row per collective: kind, mesh axes, the named dims it changes, bytes per device, the op
that needs it and where that op was written (`file:line`), because (the layout rules,
written layouts or `mtf.shard`s behind each side), and the cheapest alternative: the rule
change that would remove it and what the program then sends in all (alternatives.py). The
same data is returned, structured: an `Explanations` tuple of `Explanation`s, each the
compile report's `CollectiveRecord` and its `Alternative`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from meshir.dialect import MeshIRError, MeshIRTypeError, MeshIRValueError, get_context
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.modes import EXPLICIT
from meshir.dialect.signature import entry_function
from meshir.dialect.tensor_type import format_axes

from meshir.api import _checks as checks
from meshir.api.compilation._alternatives import Alternative, cheapest_alternatives, compile_report, size_text
from meshir.api.compilation.compile_report import CollectiveRecord


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


@reports_at_call_site
def explain(prog_or_exe, *, layout: dict | None = None, cost_model=None, show: bool = True,
            strict: bool = False) -> Explanations:
    """Print and return why each collective of the program exists.

    `prog_or_exe`: a Program (or module, GradientProgram, TrainStep), compiled here with
    `layout` rules and `cost_model` as `mi.compile` would (its passes only, no XLA), or an
    Executable from `mi.compile` (what it runs). `show=False`: do not print. `strict`: as
    `mi.compile`'s, for `layout`.
    """
    show = checks.flag(show, "show")
    if hasattr(prog_or_exe, "compile_report"):  # an Executable
        report = prog_or_exe.compile_report
        if layout is not None or cost_model is not None:
            raise MeshIRValueError("explain: an Executable's layouts are fixed; pass layout= and cost_model= to "
                                   "mi.compile instead")
        if report is None:
            raise MeshIRError("explain: this Executable was not made by mi.compile and has no compile report")
        return explain_report(report, show)
    return explain_report(_report_of(prog_or_exe, layout, cost_model, strict), show)


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


def _report_of(prog, layout, cost_model, strict: bool = False):
    """The compile report of `prog` compiled by mi.compile's passes (no lowering, no XLA)."""
    if not hasattr(getattr(prog, "module", prog), "operation"):
        raise MeshIRTypeError(f"explain: expected a Program, a module or an Executable, got {checks.describe(prog)}")
    module = checks.module_of(prog, "the program to explain")
    rules = checks.layout_rules(layout, "layout rules")
    model = checks.cost_model(cost_model)
    with get_context():
        source = module.operation.clone()
    mesh = function_mesh(entry_function(source, None), module_meshes(source.operation))
    if mesh is None:
        raise MeshIRError("explain: the program has no mesh, so it has no collectives: give one with "
                          "Program(..., mesh)")
    rules = checks.rules_on_mesh(rules, mesh, strict)
    return compile_report(source, rules, model)


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
