"""Turn a pipeline (text or parsed elements) into an MLIR PassManager that runs MeshIR's
Python passes and upstream passes in one sequence, and report failures as diagnostics.

Diagnostics flow: a MeshIR pass raises MeshIRError; the pass's callable stores the error's
located diagnostics on the Pipeline (MLIR's Python `emit_error` cannot carry notes or
severities) and signals failure. `PassManager.run` then raises MLIRError carrying the
diagnostics upstream passes emitted. `Pipeline.run` merges both, in order, into one
`PassPipelineError` (a MeshIRError with `.diagnostics`); warnings and remarks passes emit on
success are returned (a MeshIR pass returns its own from `apply`, e.g. the remarks of
`mtf-insert-collectives{explain=true}`). Exceptions other than MeshIRError are bugs and propagate.
`Pipeline.apply` (the Python API's entry) re-raises a pass's MeshIRError unchanged instead.

Verification, as MLIR's pass manager does it: the module is verified once before the first
pass and after every pass (MeshIR's verifier; MLIR's own too). Passes do not verify. A form
of IR beyond the verifier's checks (`registry.IRForm`: the partitioned form) is checked right
after the pass that produces it, and before a pass that needs it only when no earlier pass of
the pipeline produced it: in `mtf-insert-collectives,mtf-lower-to-stablehlo` the partitioned
verifier runs once, between the two.
"""
from __future__ import annotations

import re
from typing import Callable

from meshir._jax_private import ir, passmanager
from meshir.dialect.context import get_context, mlir_error_diagnostics
from meshir.dialect.diagnostics import Diagnostic, MeshIRError, VerifyError
from meshir.dialect.verifier import verify_module

from .pipeline_syntax import PipelineElement, parse_pipeline
from .registry import PASSES, IRForm, ModulePass, PassOptionError, did_you_mean
from .upstream import UPSTREAM_PASSES
from .upstream_guards import guard_problems, guarded_passes

#: Called before or after each top-level pipeline element with (element text, module op).
AfterEachHook = Callable[[str, object], None]

#: The MLIR pass name of the hook passes that call `before_each` and `after_each` (MLIR's
#: timing report lists them under this name).
HOOK_PASS_NAME = "MeshIRHook"

_SEVERITIES = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


class PassPipelineError(MeshIRError):
    """A pass failed; `.diagnostics` says where and why."""


class _RunState:
    """What the steps of one run report besides MLIR: located diagnostics, and the first
    MeshIRError a step raised (re-raised unchanged by `Pipeline.apply`)."""

    def __init__(self) -> None:
        self.failures: list[Diagnostic] = []
        self.raised: MeshIRError | None = None
        self.reported: list[Diagnostic] = []  # warnings and remarks, in the order they come

    def clear(self) -> None:
        self.failures.clear()
        self.raised = None
        self.reported = []

    def fail(self, diagnostics, error: MeshIRError | None, pass_) -> None:
        self.failures.extend(diagnostics)
        if self.raised is None and error is not None:
            self.raised = error
        pass_.signal_pass_failure()


class Pipeline:
    """A built pass pipeline; `run` applies it to modules (several times if wanted).

    Elements are parsed pipeline elements or MeshIR pass instances (Python gives typed
    options straight to the pass). Like MLIR's pass manager, the pipeline verifies the
    module: once before the first pass (`verify_input`), then after each pass
    (`verify_each`; MeshIR's verifier, and the form a pass produces, e.g. the partitioned
    form after mtf-insert-collectives). A pass that needs a form no earlier pass produced
    gets it checked right before it (mtf-lower-to-stablehlo run alone)."""

    def __init__(self, elements, *, after_each: AfterEachHook | None = None,
                 before_each: AfterEachHook | None = None, verify_each: bool = True, timing: bool = False):
        self.elements = tuple(elements)
        self.verify_each = verify_each
        self._state = _RunState()
        with get_context():
            self._pm = passmanager.PassManager("builtin.module")
            self._pm.enable_verifier(verify_each)
            if timing:  # MLIR's pass timing: its report is printed by `release()`
                self._pm.enable_timing()
            forms: set[IRForm] = set()  # the forms the IR is known to be in at this point
            for element in self.elements:
                if before_each is not None:
                    self._pm.add(_hook_pass(before_each, _label(element)), name=HOOK_PASS_NAME, argument="meshir-before-each")
                forms = self._add(element, forms)
                if after_each is not None:
                    self._pm.add(_hook_pass(after_each, _label(element)), name=HOOK_PASS_NAME, argument="meshir-after-each")

    def release(self) -> None:
        """Drop the MLIR pass manager now; with `timing=True`, MLIR writes its timing report
        to file descriptor 2 as it goes (meshir-opt captures it). The pipeline cannot run
        after this."""
        self._pm = None

    def run(self, module_op, *, verify_input: bool = True) -> list[Diagnostic]:
        """Apply the pipeline in place; return warnings/remarks; raise PassPipelineError
        carrying every diagnostic (meshir-opt). `verify_input=False`: the caller verified it."""
        error, reported = self._run(module_op, verify_input)
        if error is not None:
            raise error
        return reported

    def apply(self, module_op, *, verify_input: bool = True) -> None:
        """Apply the pipeline as a Python call (mi.compile, mi.propagate): a MeshIRError that
        a pass or a check raised propagates unchanged (type, text, traceback), as if the pass
        had been called directly; other failures raise PassPipelineError."""
        error, _ = self._run(module_op, verify_input)
        if error is not None:
            raise (self._state.raised or error)

    def _run(self, module_op, verify_input: bool) -> tuple[MeshIRError | None, list[Diagnostic]]:
        state = self._state
        state.clear()
        if verify_input:
            diags = verify_module(module_op)
            if diags:
                state.raised = MeshIRError("\n".join(str(d) for d in diags), diags)
                return PassPipelineError(str(state.raised), diags), []
        reported: list[Diagnostic] = state.reported
        ctx = get_context()
        handler = ctx.attach_diagnostic_handler(lambda d: _collect(d, reported))
        try:
            with ctx:
                self._pm.run(module_op.operation)
        except ir.MLIRError as e:
            diags = state.failures + mlir_error_diagnostics(e, with_notes=True)
            if not diags:
                diags = [Diagnostic(module_op.operation.location, "pass pipeline failed")]
            return PassPipelineError("\n".join(str(d) for d in diags), reported + diags), reported
        finally:
            handler.detach()
        return None, reported

    def _add(self, element, forms: set[IRForm]) -> set[IRForm]:
        """Add one element and the checks after it; return the forms that hold after it."""
        if isinstance(element, ModulePass):
            return self._add_instance(element, forms)
        cls = PASSES.get(element.name)
        if cls is not None:
            return self._add_meshir_pass(cls, element, forms)
        nested = _first_meshir_pass(element.children or ())
        if nested is not None:
            raise nested.error(
                f"MeshIR pass '{nested.name}' runs on the whole module: put it at the top level of the "
                f"pipeline, not inside '{element.name}(...)'"
            )
        self._add_upstream(element)
        self._add_checks([verify_module] if self.verify_each else [], "MeshIRVerify", "mtf-verify-each")
        return set()

    def _add_meshir_pass(self, cls: type[ModulePass], element: PipelineElement, forms: set[IRForm]) -> set[IRForm]:
        if element.children is not None:
            raise element.error(f"'{element.name}' is a pass, not an op name: give its options in braces, not a nested pipeline")
        try:
            instance = cls.from_options(element.option_dict())
        except PassOptionError as e:
            column = next((o.column for o in element.options or () if o.key == e.key), None)
            raise element.error(str(e), column) from None
        except MeshIRError as e:
            # A malformed option value (layout rules text) is the pass's failure, reported
            # when the pipeline runs, at the top of the input (docs/decisions.md).
            self._pm.add(_failing_pass(cls.NAME, e, self._state), name=cls.__name__, argument=cls.NAME)
            return set()
        return self._add_instance(instance, forms)

    def _add_instance(self, instance: ModulePass, forms: set[IRForm]) -> set[IRForm]:
        cls = type(instance)
        needed = instance.input_form()
        if needed is not None and needed not in forms:
            self._add_checks([needed.check], "MeshIRCheckForm", f"mtf-check-{needed.name}")
        self._pm.add(_meshir_pass(instance, self._state), name=cls.__name__, argument=cls.NAME, description=cls.SUMMARY)
        if cls.READS_ONLY or cls.KEEPS_FORMS:
            return forms
        produced = instance.output_form() if self.verify_each else None
        checks = ([verify_module] if self.verify_each else []) + ([produced.check] if produced is not None else [])
        self._add_checks(checks, "MeshIRVerify", "mtf-verify-each")
        return {produced} if produced is not None else set()

    def _add_upstream(self, element: PipelineElement) -> None:
        guarded = guarded_passes(element)
        if guarded:
            self._pm.add(_guard_pass(guarded, self._state), name="ShardyGuard", argument="meshir-shardy-guard")
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

    def _add_checks(self, checks, name: str, argument: str) -> None:
        if checks:
            self._pm.add(_check_pass(tuple(checks), self._state), name=name, argument=argument)


def build_pass_manager(pipeline, **kwargs) -> Pipeline:
    """A Pipeline from text (`builtin.module(mtf-verify, canonicalize)` or `a,b`) or parsed
    elements. Raises PipelineError (located by column) for bad syntax, unknown passes or options.
    Keyword arguments: `before_each(label, module_op)` and `after_each(label, module_op)`
    hooks (the latter after the element's verification), `verify_each` (MeshIR's and MLIR's
    verifiers after each pass), `timing` (MLIR's pass timing, reported by `release()`)."""
    elements = parse_pipeline(pipeline) if isinstance(pipeline, str) else tuple(pipeline)
    return Pipeline(elements, **kwargs)


def known_pass_names() -> list[str]:
    return sorted(set(PASSES) | set(UPSTREAM_PASSES))


def _meshir_pass(instance: ModulePass, state: _RunState):
    def run(op, pass_) -> None:
        try:
            state.reported.extend(instance.apply(op) or ())
        except (MeshIRError, VerifyError) as e:
            # An error without a location may come from IR the verifier would have refused
            # (meshir-opt --mlir-very-unsafe-disable-verifier-on-parsing): then report what
            # the verifier says, located. A bare VerifyError on verified IR is a bug: re-raise.
            diagnostics = getattr(e, "diagnostics", ()) or verify_module(op)
            if not diagnostics and not isinstance(e, MeshIRError):
                raise
            state.fail(diagnostics or [Diagnostic(op.location, f"pass '{instance.NAME}' failed: {e}")],
                       e if isinstance(e, MeshIRError) else None, pass_)

    return run


def _check_pass(checks, state: _RunState):
    """The pipeline's check between passes: each check returns diagnostics; the first that
    finds errors fails the pipeline (later checks may assume what earlier ones establish)."""
    def run(op, pass_) -> None:
        for check in checks:
            diags = check(op)
            errors = [d for d in diags if d.severity == "error"]
            if errors:
                state.fail(diags, MeshIRError("\n".join(str(d) for d in errors), diags), pass_)
                return

    return run


def _failing_pass(name: str, error: MeshIRError, state: _RunState):
    return lambda op, pass_: state.fail([Diagnostic(op.location, f"pass '{name}' failed: {error}")], error, pass_)


def _label(element) -> str:
    """How `--mlir-print-ir-after-all`, `before_each` and `after_each` name an element: its
    text, or the name of a pass given as an instance."""
    return element.NAME if isinstance(element, ModulePass) else element.text


def _guard_pass(guarded, state: _RunState):
    """Check what the Shardy passes of one element need (upstream_guards.py) right before it."""
    def run(op, pass_) -> None:
        problems = guard_problems(op, guarded)
        if problems:
            state.fail(problems, None, pass_)

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
