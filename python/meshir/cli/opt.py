"""`meshir-opt`: mlir-opt for MeshIR. Parse (text or bytecode), verify, run a pass pipeline,
verify, print (text or bytecode); with mlir-opt's reports on the way (docs/cli.md).

Every failure a user can cause - unreadable file, malformed IR, verifier error, unknown pass
or option, failing pass - is printed as `file:line:col: error: message` and exits 1. Anything
else is a MeshIR bug: one "internal error" line (exit 2), the traceback with MESHIR_DEBUG=1.
"""
from __future__ import annotations

import contextlib
import os
import sys
import traceback

from meshir.dialect import Diagnostic, MeshIRError, parse_module, verify_module
from meshir.dialect.nesting import MAX_NESTING, nesting_problem
from meshir.transforms import PipelineError, build_pass_manager, parse_pipeline
from meshir.transforms.infra.pass_manager import HOOK_PASS_NAME, known_pass_names
from meshir.transforms.infra.registry import did_you_mean

from . import expected_diagnostics
from .args import UsageError, build_parser, cli_option_names, split_pass_flags
from .bytecode import parse_bytecode, write_bytecode
from .diagnostic_printer import Reporter
from .dialects import show_dialects
from .input_file import InputError, InputFile, read_input
from .instrumentation import Instrumentation
from .ir_printing import print_module
from .pipeline_dump import dump_pipeline
from .split_input import SPLIT_MARKER, Chunk, split_input
from .timing import capture_fd2


class _Failed(Exception):
    """Stop: the message was printed already."""


def main(argv=None) -> int:
    """Run meshir-opt on `argv` (default: sys.argv[1:]); return the exit code."""
    try:
        return _run(sys.argv[1:] if argv is None else list(argv))
    except _Failed:
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:
        _error(f"internal error: {type(e).__name__}: {e}")
        sys.stderr.write("This is a bug in MeshIR; please report it with the input that triggers it")
        if os.environ.get("MESHIR_DEBUG"):
            sys.stderr.write(".\n" + traceback.format_exc())
        else:
            sys.stderr.write(" (set MESHIR_DEBUG=1 to see the traceback).\n")
        return 2


def _run(argv: list[str]) -> int:
    parser = build_parser()
    try:
        rest, flags = split_pass_flags(argv, parser)
        opts = parser.parse_args(rest)
    except UsageError as e:
        _error(f"{e} (see meshir-opt --help)")
        return 1
    if opts.help:
        sys.stdout.write(parser.format_help())
        return 0
    if opts.version:
        sys.stdout.write(_version() + "\n")
        return 0
    if opts.show_dialects:
        sys.stdout.write(show_dialects())
        return 0
    driver = _driver(opts, flags, parser)
    try:
        source = read_input(opts.input)
    except InputError as e:
        _error(str(e))
        raise _Failed from None
    chunks = _chunks(opts, source)
    driver.source_name = source.name
    outputs, ok = [], True
    for chunk in chunks:
        output, chunk_ok = driver.process(chunk)
        ok &= chunk_ok
        if output is not None:
            outputs.append(output)
    if ok:
        _write_output(opts.output, b"".join(outputs) if opts.emit_bytecode else (opts.output_split_marker + "\n").join(outputs))
    return 0 if ok else 1


def _chunks(opts, source: InputFile) -> list:
    """The inputs to process: the bytecode, or the text's chunks (`--split-input-file`)."""
    if source.bytecode is not None:
        if opts.split_input_file is not None:
            _error(f"--split-input-file: '{source.name}' is MLIR bytecode, which cannot be split; give its text")
            raise _Failed
        return [source.bytecode]
    if opts.split_input_file is not None and opts.emit_bytecode:
        _error("--emit-bytecode writes one module: it cannot be combined with --split-input-file")
        raise _Failed
    marker = (opts.split_input_file or SPLIT_MARKER) if opts.split_input_file is not None else None
    chunks = split_input(source.text, marker)
    if opts.split_input_file and len(chunks) == 1:  # a marker given that is on no line
        _error(f"--split-input-file: no line of '{source.name}' is the marker '{marker}', so nothing is split "
               f"(a marker is a line of its own; the default is '{SPLIT_MARKER}')")
        raise _Failed
    return chunks


class _Driver:
    """Processes the inputs (chunks) of one run with one pipeline (`elements`, built here:
    raises PipelineError)."""

    def __init__(self, opts, elements):
        self.opts, self.elements = opts, elements
        self.source_name = "<stdin>"
        self._run: Instrumentation | None = None  # of the input being processed
        self._pipeline = self._build(timing=False) if elements else None

    def process(self, chunk) -> tuple[str | bytes | None, bool]:
        """(printed module or None, success) for one chunk (or bytecode); prints or checks
        diagnostics, then the reports asked for."""
        self._run = Instrumentation(self.opts, self.elements)
        output, diags = self._transform(chunk)
        lines = chunk.lines if isinstance(chunk, Chunk) else []
        reporter = Reporter(self.source_name, lines)
        if not self.opts.verify_diagnostics:
            for d in diags:
                reporter.diagnostic(d)
            ok = not any(d.severity == "error" for d in diags)
        else:
            expected, problems = expected_diagnostics.parse_expected(lines)
            problems += expected_diagnostics.check(expected, diags, self.source_name)
            for p in problems:
                reporter.at(p.line, p.column, "error", p.message)
            ok = not problems
        self._run.finish()
        return output, ok

    def _transform(self, chunk):
        """(printed module or None, diagnostics): parse, verify, run, verify."""
        run = self._run
        with _measure(run, "Parser"):
            if isinstance(chunk, Chunk):
                module, diags = parse_module(chunk.text, self.source_name)
            else:
                module, diags = parse_bytecode(chunk, self.source_name)
            if module is not None and not self.opts.no_verify_on_parse:
                diags = verify_module(module)
                module = None if diags else module
        if module is None:
            return None, diags
        run.pipeline_ran = True
        if self.opts.dump_pass_pipeline:
            _write_stderr(dump_pipeline(self.elements))
        reported = []
        if self.elements:
            # Verified after parsing (above), or else by the pipeline before its first pass
            # (passes take verified IR); then after each pass.
            pipeline = self._pipeline_for(run)
            try:
                reported = pipeline.run(module, verify_input=self.opts.no_verify_on_parse)
            except MeshIRError as e:
                run.pipeline_failed(module)
                return None, list(e.diagnostics)
            finally:
                if run.timing is not None:
                    run.timing.add_mlir_report(capture_fd2(pipeline.release), hidden=HOOK_PASS_NAME)
        elif self.opts.verify_each and self.opts.no_verify_on_parse:
            errors = verify_module(module)  # no pass, and not verified after parsing
            if errors:
                return None, errors
        with _measure(run, "Output"):
            return self._output(module, reported)

    def _output(self, module, reported):
        """(output, diagnostics): the module printed (or its bytecode), unless it nests deeper
        than meshir-opt reads back."""
        flags = {"debuginfo": self.opts.mlir_print_debuginfo, "generic": self.opts.mlir_print_op_generic}
        output = print_module(module, **flags)
        too_deep = nesting_problem(output)
        if too_deep is not None:  # a pass nested it deeper: refuse what meshir-opt would not read back
            line, column, _ = too_deep
            return None, reported + [Diagnostic(module.location, (
                f"the output nests deeper than {MAX_NESTING} levels of brackets (at its line {line}, column "
                f"{column}), deeper than meshir-opt reads back; it is not printed"))]
        return (write_bytecode(module) if self.opts.emit_bytecode else output), reported

    def _pipeline_for(self, run: Instrumentation):
        """The pipeline for this input: with --mlir-timing a new one (MLIR reports the passes'
        times when it goes away), else the one built first."""
        return self._build(timing=True) if run.timing is not None else self._pipeline

    def _build(self, timing: bool):
        hooks = {}
        if Instrumentation.hooks_wanted(self.opts):  # forwarded to the input being processed
            hooks = {"before_each": lambda label, op: self._run.before(label, op),
                     "after_each": lambda label, op: self._run.after(label, op)}
        return build_pass_manager(self.elements, verify_each=self.opts.verify_each, timing=timing, **hooks)


def _measure(run: Instrumentation, name: str):
    return run.timing.measure(name) if run.timing is not None else contextlib.nullcontext()


def _driver(opts, flags, parser) -> _Driver:
    """The driver of the pipeline the options ask for (none: no passes); prints and fails on
    errors in it."""
    if opts.pass_pipeline is not None and flags:
        _error(f"use either --pass-pipeline or pass flags ({flags[0].flag}), not both")
        raise _Failed
    try:
        if opts.pass_pipeline is not None:
            elements = tuple(parse_pipeline(opts.pass_pipeline))
        else:
            elements = tuple(e for flag in flags for e in _flag_elements(flag))
        return _Driver(opts, elements)
    except PipelineError as e:
        flag = next((f for f in flags if f.pipeline_text == e.source), None)
        if flag is None:
            _write(e.render("<pass-pipeline>"))
        elif e.message.startswith("unknown pass"):
            names = cli_option_names(parser) + ["--" + n for n in known_pass_names()]
            _error(f"unknown option or pass '{flag.flag}'{did_you_mean(flag.flag.partition('=')[0], names)} (see meshir-opt --help)")
        else:
            _error(f"{flag.flag}: {e.message}")
        raise _Failed from None


def _flag_elements(flag):
    elements = parse_pipeline(flag.pipeline_text)
    if len(elements) != 1:
        raise PipelineError(f"expected one pass in '{flag.flag}'", flag.pipeline_text, 1)
    return elements


def _write_output(path: str, output: str | bytes) -> None:
    binary = isinstance(output, bytes)
    if path == "-":
        stream = sys.stdout.buffer if binary and hasattr(sys.stdout, "buffer") else sys.stdout
        if binary and stream is sys.stdout:  # a text stream in place of stdout (in-process callers)
            _error("cannot write bytecode to this standard output (a text stream); use -o FILE")
            raise _Failed
        stream.write(output)
        stream.flush()
        return
    try:
        with (open(path, "wb") if binary else open(path, "w", encoding="utf-8")) as f:
            f.write(output)
    except OSError as e:
        _error(f"cannot write output file '{path}': {e.strerror or e}")
        raise _Failed from None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def get(dist):
        try:
            return version(dist)
        except PackageNotFoundError:
            return "unknown"

    return f"meshir-opt (MeshIR) {get('meshir')}, MLIR from jaxlib {get('jaxlib')}"


def _error(message: str) -> None:
    _write(f"meshir-opt: error: {message}")


def _write(text: str) -> None:
    _write_stderr(text + "\n")


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
