"""meshir-opt's command line: mlir-opt's options, plus one flag per pass.

Like mlir-opt, long options may be written with one dash (`-split-input-file`), and every
pass is also a flag: `--mtf-verify`, `--cse`, `--canonicalize='max-iterations=2'`. A pass
flag's OPTIONS are what a pipeline writes in braces (`--p='a=1 b="x y"'` is `p{a=1 b="x y"}`;
`--p='{a=1}'` is accepted too). Flags that name no option are taken as passes, in order.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

from meshir.transforms import PASSES
from meshir.transforms.infra.registry import PassInfo, did_you_mean
from meshir.transforms.infra.upstream import UPSTREAM_PASSES

from .split_input import SPLIT_MARKER

USAGE = "meshir-opt [options] [--<pass>[=OPTIONS] ...] [input-file]"
DESCRIPTION = (
    "MeshIR's optimizer driver: parse MLIR with mtf ops, verify it, run a pass pipeline, "
    "verify again and print the result."
)


_STORE_CONST = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction)
#: Options whose value is optional and, as in mlir-opt, only given with '=': `--split-input-file`
#: alone means the default marker (read as the empty value).
_OPTIONAL_VALUE = frozenset({"--split-input-file"})
#: What upstream passes do not do to mtf ops, said in --help.
_UPSTREAM_NOTES = {
    "canonicalize": "; leaves mtf ops alone: use --mtf-canonicalize",
    "cse": "; leaves mtf ops alone: use --mtf-canonicalize",
}


class UsageError(Exception):
    """A command line that cannot be understood."""


@dataclass(frozen=True)
class PassFlag:
    """A pass given as a flag: `--name` or `--name=OPTIONS`."""

    flag: str  # as written (after one-dash long options are normalized)
    pipeline_text: str  # `name` or `name{OPTIONS}`


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit(2) with the usage text
        raise UsageError(message)

    def format_help(self) -> str:
        # The pass list imports every pass module (50-70 ms): made when the help is asked
        # for, not at every start.
        if self.epilog is None:
            self.epilog = passes_help()
        return super().format_help()


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "on"):
        return True
    if text.lower() in ("false", "0", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="meshir-opt",
        usage=USAGE,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        allow_abbrev=False,
    )
    p.add_argument("input", nargs="?", default="-", help="input file ('-' or none: standard input)")
    p.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: standard output)")
    p.add_argument("--pass-pipeline", metavar="PIPELINE", help="passes to run, e.g. 'builtin.module(mtf-verify, canonicalize, func.func(cse))'")
    p.add_argument("--dump-pass-pipeline", action="store_true", help="print the pipeline that will run to stderr, every option written out")
    p.add_argument("--split-input-file", metavar="[=MARKER]", help=f"process each chunk between MARKER lines (default: '{SPLIT_MARKER}') on its own")
    p.add_argument("--output-split-marker", default=SPLIT_MARKER, metavar="MARKER", help=f"the line joining the outputs of the chunks (default: '{SPLIT_MARKER}')")
    p.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-error/warning/note/remark comments instead of printing them")
    p.add_argument("--emit-bytecode", action="store_true", help="write the output as MLIR bytecode (input may be text or bytecode)")
    p.add_argument("--mlir-print-op-generic", action="store_true", help="print ops in the generic form")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations with the IR")
    p.add_argument("--mlir-print-ir-before-all", action="store_true", help="print the IR to stderr before each pass")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR to stderr after each pass (and after a pass that failed)")
    p.add_argument("--mlir-print-ir-after-change", action="store_true", help="with --mlir-print-ir-after-all: only after passes that changed the IR")
    p.add_argument("--mlir-print-ir-after-failure", action="store_true", help="print the IR to stderr after a pass that failed")
    p.add_argument("--mlir-timing", action="store_true", help="print the execution time report (parser, each pass, output) to stderr")
    p.add_argument("--mlir-pass-statistics", action="store_true", help="print each pass's statistics (ops added and removed) to stderr")
    p.add_argument("--verify-each", type=_bool, default=True, metavar="BOOL", help="verify after each pass and after the pipeline (default: true)")
    p.add_argument("--mlir-very-unsafe-disable-verifier-on-parsing", dest="no_verify_on_parse", action="store_true", help="do not run the MeshIR verifier after parsing")
    p.add_argument("--allow-unregistered-dialect", action="store_true", help="accepted for mlir-opt compatibility; always on (mtf ops are unregistered)")
    p.add_argument("--show-dialects", action="store_true", help="print the dialects meshir-opt reads and exit")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    p.add_argument("-h", "--help", action="store_true", help="print this help and exit")
    return p


def passes_help() -> str:
    """The epilog of --help: how to give passes, and every pass with its options."""
    lines = [
        "passes:",
        "  --<pass>[=OPTIONS]    add a pass (in command-line order); OPTIONS as in a pipeline's",
        "                        braces: --mtf-foo='opt=1 rules=\"batch:x,d_ff:y\"'",
        "  (use either --pass-pipeline or pass flags)",
        "",
        "MeshIR passes:",
    ]
    for cls in sorted(PASSES.values(), key=lambda c: c.NAME):
        lines += _pass_lines(cls.info())
    lines += ["", "upstream MLIR and Shardy passes (any pass registered in jaxlib's MLIR is accepted):"]
    for info in UPSTREAM_PASSES.values():
        lines += _pass_lines(PassInfo(info.name, info.summary + _UPSTREAM_NOTES.get(info.name, ""), info.options))
    lines += [
        "  (MLIR sees mtf ops as unregistered ops, which may have side effects: canonicalize and cse",
        "  neither fold, merge nor erase them; mtf-canonicalize does, from the ops' own traits)",
    ]
    return "\n".join(lines)


def _pass_lines(info: PassInfo) -> list[str]:
    lines = [f"  --{info.name:<34} {info.summary}"]
    for opt in info.options:
        default = opt.default if not isinstance(opt.default, bool) else str(opt.default).lower()
        lines.append(f"      {opt.name}=<{opt.type_text}>  (default: {default!s})  {opt.help}")
    return lines


def split_pass_flags(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], list[PassFlag]]:
    """Separate pass flags from the options argparse knows, keeping the passes' order."""
    known = parser._option_string_actions
    takes_value = {s for s, a in known.items() if a.nargs is None and not isinstance(a, _STORE_CONST)}
    rest: list[str] = []
    flags: list[PassFlag] = []
    i = 0
    while i < len(argv):
        arg = _long_form(argv[i], known)
        if arg == "--":
            rest += argv[i:]
            break
        name, eq, value = arg.partition("=")
        if name in _OPTIONAL_VALUE and not eq:
            rest.append(name + "=")
        elif arg.startswith("--mlir-") and name not in known:  # no pass is named mlir-*
            raise UsageError(f"unknown option '{name}'{did_you_mean(name, cli_option_names(parser))}")
        elif arg.startswith("--") and name not in known:
            flags.append(PassFlag(arg, _pass_text(name[2:], value if eq else None)))
        else:
            rest.append(arg)
            if name in takes_value and not eq and i + 1 < len(argv):
                rest.append(argv[i + 1])
                i += 1
        i += 1
    return rest, flags


def _long_form(arg: str, known) -> str:
    """`-split-input-file` -> `--split-input-file` (mlir-opt accepts one dash); `-o x` stays."""
    if not arg.startswith("-") or arg.startswith("--") or len(arg) <= 2 or arg.startswith("-o"):
        return arg
    name = arg[1:].partition("=")[0]
    if f"--{name}" in known or name in PASSES or name in UPSTREAM_PASSES or "-" in name:
        return "-" + arg
    return arg


def _pass_text(name: str, options: str | None) -> str:
    if options is None:
        return name
    options = options.strip()
    if options.startswith("{") and options.endswith("}"):
        options = options[1:-1]
    return f"{name}{{{options}}}"


def cli_option_names(parser: argparse.ArgumentParser) -> list[str]:
    """Every `--option` of the parser (for did-you-mean on unknown flags)."""
    return [s for s in parser._option_string_actions if s.startswith("--")]
