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

from meshir.dialect import MeshIRError, MeshIRTypeError, MeshIRValueError, get_context
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.modes import EXPLICIT
from meshir.dialect.signature import entry_function

from meshir.api import _checks as checks
from meshir.api.compilation._alternatives import partition
from meshir.api.compilation.compile_report import CompileReport
from meshir.api.compilation.explanations import Explanations, explain_report


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
    with get_context():
        module = source.operation.clone()
    partition(module, rules, model)
    return CompileReport(module, EXPLICIT, source, rules, model)
