"""Turn a pipeline (text or parsed elements) into an MLIR PassManager that runs MeshIR's
Python passes and upstream passes in one sequence, and report failures as diagnostics.

Diagnostics flow: a MeshIR pass raises MeshIRError; the pass's callable stores the error's
located diagnostics on the Pipeline (MLIR's Python `emit_error` cannot carry notes or
severities) and signals failure. `PassManager.run` then raises MLIRError carrying the
diagnostics upstream passes emitted. `Pipeline.run` merges both, in order, into one
`PassPipelineError` (a MeshIRError with `.diagnostics`); warnings and remarks upstream passes
emit on success are returned. Exceptions other than MeshIRError are bugs and propagate.
"""
from __future__ import annotations

import re
from typing import Callable

from meshir._jax_private import ir, passmanager
from meshir.dialect.context import get_context, mlir_error_diagnostics
from meshir.dialect.diagnostics import Diagnostic, MeshIRError, VerifyError
from meshir.dialect.verifier import verify_module

from .pipeline_syntax import PipelineElement, parse_pipeline
from .registry import PASSES, ModulePass, PassOptionError, did_you_mean
from .upstream import UPSTREAM_PASSES
from .upstream_guards import guard_problems, guarded_passes

#: Called after each top-level pipeline element with (element text, module op).
AfterEachHook = Callable[[str, object], None]

_SEVERITIES = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


class PassPipelineError(MeshIRError):
    """A pass failed; `.diagnostics` says where and why."""


class Pipeline:
    """A built pass pipeline; `run` applies it to modules (several times if wanted)."""

    def __init__(self, elements, *, after_each: AfterEachHook | None = None, verify_each: bool = True):
        self.elements = tuple(elements)
        self._failures: list[Diagnostic] = []
        with get_context():
            self._pm = passmanager.PassManager("builtin.module")
            self._pm.enable_verifier(verify_each)
            for element in self.elements:
                self._add(element)
                if after_each is not None:
                    self._pm.add(_hook_pass(after_each, element.text), name="PrintIR", argument="meshir-print-ir")

    def run(self, module_op) -> list[Diagnostic]:
        """Apply the pipeline in place; return warnings/remarks; raise PassPipelineError."""
        self._failures.clear()
        reported: list[Diagnostic] = []
        ctx = get_context()
        handler = ctx.attach_diagnostic_handler(lambda d: _collect(d, reported))
        try:
            with ctx:
                self._pm.run(module_op.operation)
        except ir.MLIRError as e:
            diags = self._failures + mlir_error_diagnostics(e, with_notes=True)
            if not diags:
                diags = [Diagnostic(module_op.operation.location, "pass pipeline failed")]
            raise PassPipelineError("\n".join(str(d) for d in diags), reported + diags) from None
        finally:
            handler.detach()
        return reported

    def _add(self, element: PipelineElement) -> None:
        cls = PASSES.get(element.name)
        if cls is not None:
            self._add_meshir_pass(cls, element)
            return
        nested = _first_meshir_pass(element.children or ())
        if nested is not None:
            raise nested.error(
                f"MeshIR pass '{nested.name}' runs on the whole module: put it at the top level of the "
                f"pipeline, not inside '{element.name}(...)'"
            )
        self._add_upstream(element)

    def _add_meshir_pass(self, cls: type[ModulePass], element: PipelineElement) -> None:
        if element.children is not None:
            raise element.error(f"'{element.name}' is a pass, not an op name: give its options in braces, not a nested pipeline")
        try:
            instance = cls.from_options(element.option_dict())
        except PassOptionError as e:
            column = next((o.column for o in element.options or () if o.key == e.key), None)
            raise element.error(str(e), column) from None
        self._pm.add(_meshir_pass(instance, self._failures), name=cls.__name__, argument=cls.NAME, description=cls.SUMMARY)

    def _add_upstream(self, element: PipelineElement) -> None:
        guarded = guarded_passes(element)
        if guarded:
            self._pm.add(_guard_pass(guarded, self._failures), name="ShardyGuard", argument="meshir-shardy-guard")
        try:
            self._pm.add(element.text)
            return
        except ValueError as e:
            message = str(e)
        # mlir-opt nests op-specific passes implicitly (`cse` alone runs on the module, but
        # `sdy-insert-explicit-reshards` only on func.func): do the same.
        anchor = re.search(r"restricted to '([\w.]+)'", message)
        if anchor and element.children is None:
            try:
                self._pm.add(f"{anchor.group(1)}({element.text})")
                return
            except ValueError as e:
                message = str(e)
        raise _upstream_error(element, message)


def build_pass_manager(pipeline, **kwargs) -> Pipeline:
    """A Pipeline from text (`builtin.module(mtf-verify, canonicalize)` or `a,b`) or parsed
    elements. Raises PipelineError (located by column) for bad syntax, unknown passes or options.
    Keyword arguments: `after_each(label, module_op)` hook, `verify_each` (MLIR's verifier)."""
    elements = parse_pipeline(pipeline) if isinstance(pipeline, str) else tuple(pipeline)
    return Pipeline(elements, **kwargs)


def known_pass_names() -> list[str]:
    return sorted(set(PASSES) | set(UPSTREAM_PASSES))


def _meshir_pass(instance: ModulePass, failures: list[Diagnostic]):
    def run(op, pass_) -> None:
        try:
            instance.apply(op)
        except (MeshIRError, VerifyError) as e:
            # An error without a location may come from IR the verifier would have refused
            # (meshir-opt --mlir-very-unsafe-disable-verifier-on-parsing): then report what
            # the verifier says, located. A bare VerifyError on verified IR is a bug: re-raise.
            diagnostics = getattr(e, "diagnostics", ()) or verify_module(op)
            if not diagnostics and not isinstance(e, MeshIRError):
                raise
            failures.extend(diagnostics or [Diagnostic(op.location, f"pass '{instance.NAME}' failed: {e}")])
            pass_.signal_pass_failure()

    return run


def _guard_pass(guarded, failures: list[Diagnostic]):
    """Check what the Shardy passes of one element need (upstream_guards.py) right before it."""
    def run(op, pass_) -> None:
        problems = guard_problems(op, guarded)
        if problems:
            failures.extend(problems)
            pass_.signal_pass_failure()

    return run


def _hook_pass(hook: AfterEachHook, label: str):
    return lambda op, pass_: hook(label, op)


def _first_meshir_pass(elements) -> PipelineElement | None:
    for element in elements:
        if element.name in PASSES:
            return element
        found = _first_meshir_pass(element.children or ())
        if found is not None:
            return found
    return None


def _collect(diag, into: list[Diagnostic]) -> bool:
    """Context diagnostic handler: keep what MLIR reports outside error collection."""
    severity = _SEVERITIES.get(diag.severity, "error")
    into.append(Diagnostic(diag.location, diag.message, severity))
    into.extend(Diagnostic(n.location, n.message, "note") for n in diag.notes)
    return True


def _upstream_error(element: PipelineElement, message: str):
    """A PipelineError from the ValueError MLIR raises when it cannot add `element`."""
    unknown = re.search(r"'([^']*)' does not refer to a registered pass", message)
    where = re.search(r"Parser:1:(\d+):", message)
    column = element.column + int(where.group(1)) - 1 if where else element.column
    if unknown:
        name = unknown.group(1)
        if not name:
            return element.error("expected a pass name", column)
        return element.error(
            f"unknown pass '{name}'{did_you_mean(name, known_pass_names())} "
            f"(known passes: {', '.join(known_pass_names())}; see meshir-opt --help)",
            column,
        )
    lines = [
        re.sub(r"^(<Pass-Options-Parser>: |MLIR Textual PassPipeline Parser:1:\d+: error: )", "", line).strip()
        for line in message.splitlines()
    ]
    lines = [line for line in lines if line and not line.startswith("failed to add") and line != element.text.strip()]
    lines = [line for line in lines if set(line) != {" ", "^"} and line != "^"]
    detail = "; ".join(lines) if lines else "invalid options"
    return element.error(f"cannot add pass '{element.text}': {detail}", column)
