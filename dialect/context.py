"""The process-wide MLIR context MeshIR builds, parses and transforms in."""
from __future__ import annotations

from meshir._jax_private import ir, new_context

from . import ops  # noqa: F401  (registers the op classes)
from .call_site import reports_at_call_site
from .diagnostics import Diagnostic, MeshIRTypeError
from .nesting import nesting_problem

_CONTEXT: ir.Context | None = None


def get_context() -> ir.Context:
    """The shared context: func, stablehlo, sdy and (unregistered) mtf ops in one place."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = new_context()
    return _CONTEXT


@reports_at_call_site
def parse_module(text: str, source_name: str = "-"):
    """Parse MLIR text into a `builtin.module` op; return (module, []) or (None, diagnostics).

    Locations name `source_name`. Like mlir-opt, top-level ops without a `module` wrapper are
    wrapped in one, put on the first line so that line numbers stay those of the file
    (with several top-level ops, columns on line 1 are then off by 8). Text nested deeper
    than nesting.MAX_NESTING, the wrapper counted, is refused: printed, a module reads back.
    """
    for what, value in (("text", text), ("source_name", source_name)):
        if not isinstance(value, str):
            raise MeshIRTypeError(f"parse_module: {what} must be a str, got {type(value).__name__} {value!r:.60}")
    ctx = get_context()
    with ctx:
        # One scan in the common case: only text as deep as the limit is scanned again.
        deep_if_wrapped = nesting_problem(text, wrapped=True)
        too_deep = deep_if_wrapped and nesting_problem(text)
        if too_deep:  # the parser must not see it
            return None, [_located(too_deep, source_name)]
        try:
            op = ir.Operation.parse(text, source_name=source_name, context=ctx)
        except ir.MLIRError as e:
            if "single top-level operation" not in str(e):
                return None, mlir_error_diagnostics(e)
            op = None
        if op is not None and op.operation.name == "builtin.module":
            return op, []
        if deep_if_wrapped:  # the module around it is one level more: printed, it would not read back
            return None, [_located(deep_if_wrapped, source_name)]
        if op is not None:
            # One op that is not a module: move it into one, so its columns stay exact
            # (the textual wrapper below shifts line 1 by len("module {")).
            module = ir.Operation.parse("module {\n}", source_name=source_name, context=ctx)
            module.regions[0].blocks[0].append(op.operation)
            return module, []
        try:
            return ir.Operation.parse("module {" + text + "\n}", source_name=source_name, context=ctx), []
        except ir.MLIRError as e:
            return None, mlir_error_diagnostics(e)


def _located(problem: tuple[int, int, str], source_name: str) -> Diagnostic:
    line, column, message = problem
    return Diagnostic(ir.Location.file(source_name, line, column), message)


def mlir_error_diagnostics(error: ir.MLIRError, with_notes: bool = False) -> list[Diagnostic]:
    """The diagnostics an MLIRError carries (parse, verify or pass failures).

    With `with_notes`, each error is followed by its notes (severity "note"), except the
    "see current operation" dump MLIR attaches to verifier errors (mlir-opt hides it too).
    """
    diags = []
    for d in error.error_diagnostics:
        diags.append(Diagnostic(d.location, d.message))
        if with_notes:
            diags += [
                Diagnostic(n.location, n.message, "note")
                for n in d.notes
                if not n.message.startswith("see current operation")
            ]
    return diags
