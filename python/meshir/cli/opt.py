"""`meshir-opt`: mlir-opt for MeshIR. Parse, verify, run a pass pipeline, verify, print.

Every failure a user can cause - unreadable file, malformed IR, verifier error, unknown pass
or option, failing pass - is printed as `file:line:col: error: message` and exits 1. Anything
else is a MeshIR bug: one "internal error" line (exit 2), the traceback with MESHIR_DEBUG=1.
"""
from __future__ import annotations

import os
import sys
import traceback

from meshir.dialect import Diagnostic, MeshIRError, parse_module, verify_module
from meshir.dialect.nesting import MAX_NESTING, nesting_problem
from meshir.transforms import PipelineError, build_pass_manager, parse_pipeline
from meshir.transforms.pass_manager import known_pass_names
from meshir.transforms.registry import did_you_mean

from . import expected_diagnostics
from .args import UsageError, build_parser, cli_option_names, split_pass_flags
from .diagnostic_printer import Reporter
from .split_input import SPLIT_MARKER, split_input


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
    pipeline = _pipeline(opts, flags, parser)
    source_name, text = _read_input(opts.input)
    driver = _Driver(opts, pipeline, source_name)
    outputs, ok = [], True
    for chunk in split_input(text, opts.split_input_file):
        output, chunk_ok = driver.process(chunk)
        ok &= chunk_ok
        if output is not None:
            outputs.append(output)
    if ok:
        _write_output(opts.output, (SPLIT_MARKER + "\n").join(outputs))
    return 0 if ok else 1


class _Driver:
    """Processes chunks of one input with one pipeline."""

    def __init__(self, opts, pipeline, source_name: str):
        self.opts, self.pipeline, self.source_name = opts, pipeline, source_name

    def process(self, chunk) -> tuple[str | None, bool]:
        """(printed module or None, success) for one chunk; prints or checks diagnostics."""
        output, diags = self._transform(chunk.text)
        reporter = Reporter(self.source_name, chunk.lines)
        if not self.opts.verify_diagnostics:
            for d in diags:
                reporter.diagnostic(d)
            return output, not any(d.severity == "error" for d in diags)
        expected, problems = expected_diagnostics.parse_expected(chunk.lines)
        problems += expected_diagnostics.check(expected, diags, self.source_name)
        for p in problems:
            reporter.at(p.line, p.column, "error", p.message)
        return output, not problems

    def _transform(self, text: str):
        """(printed module or None, diagnostics): parse, verify, run, verify."""
        module, diags = parse_module(text, self.source_name)
        if module is None:
            return None, diags
        if not self.opts.no_verify_on_parse:
            diags = verify_module(module)
            if diags:
                return None, diags
        reported = []
        if self.pipeline is not None:
            # Verified after parsing (above), or else by the pipeline before its first pass
            # (passes take verified IR); then after each pass.
            try:
                reported = self.pipeline.run(module, verify_input=self.opts.no_verify_on_parse)
            except MeshIRError as e:
                return None, list(e.diagnostics)
        elif self.opts.verify_each and self.opts.no_verify_on_parse:
            errors = verify_module(module)  # no pass, and not verified after parsing
            if errors:
                return None, errors
        output = _print_module(module, self.opts.mlir_print_debuginfo)
        too_deep = nesting_problem(output)
        if too_deep is not None:  # a pass nested it deeper: refuse what meshir-opt would not read back
            line, column, _ = too_deep
            return None, reported + [Diagnostic(module.location, (
                f"the output nests deeper than {MAX_NESTING} levels of brackets (at its line {line}, column "
                f"{column}), deeper than meshir-opt reads back; it is not printed"))]
        return output, reported


def _pipeline(opts, flags, parser):
    """The Pipeline the options ask for (None: no passes); prints and fails on errors."""
    if opts.pass_pipeline is not None and flags:
        _error(f"use either --pass-pipeline or pass flags ({flags[0].flag}), not both")
        raise _Failed
    after_each = (lambda label, op: _dump_ir(label, op, opts.mlir_print_debuginfo)) if opts.mlir_print_ir_after_all else None
    try:
        if opts.pass_pipeline is not None:
            elements = parse_pipeline(opts.pass_pipeline)
        else:
            elements = [e for flag in flags for e in _flag_elements(flag)]
        if not elements:
            return None
        return build_pass_manager(elements, after_each=after_each, verify_each=opts.verify_each)
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


def _read_input(path: str) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return path, f.read()
    except (OSError, UnicodeDecodeError) as e:
        _error(f"cannot read input file '{path}': {getattr(e, 'strerror', None) or e}")
        raise _Failed from None


def _write_output(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        _error(f"cannot write output file '{path}': {e.strerror or e}")
        raise _Failed from None


def _print_module(module, debuginfo: bool) -> str:
    text = module.operation.get_asm(enable_debug_info=debuginfo)
    return text if text.endswith("\n") else text + "\n"


def _dump_ir(label: str, op, debuginfo: bool) -> None:
    _write(f"// -----// IR Dump After {label} //----- //\n{_print_module(op, debuginfo)}")


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
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
