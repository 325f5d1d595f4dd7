"""`--verify-diagnostics`: check produced diagnostics against `expected-*` comments.

mlir-opt's conventions:

    %0 = "mtf.foo"() : () -> ()   // expected-error {{unknown operation}}     this line
    // expected-error @+1 {{...}}        the next line (@-2: two lines up)
    // expected-warning @above {{...}}   the last line above without an expected-* comment
    // expected-note @below {{...}}      the next line below without one (stacked ones too)
    // expected-remark @unknown {{...}}  a diagnostic without a file location
    // expected-error-re {{size {{[0-9]+}} is odd}}   text with {{regex}} parts

The text must occur in the message. Every expected diagnostic must be produced, and every
produced one expected; mismatches are reported the way mlir-opt reports them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from meshir.dialect.diagnostics import Diagnostic

_EXPECTED = re.compile(
    r"expected-(?P<severity>error|warning|note|remark)(?P<re>-re)?"
    r"[ \t]*(?:@(?P<where>[+-][0-9]+|above|below|unknown))?[ \t]*\{\{(?P<text>.*)\}\}[ \t]*$"
)
_MARKER = re.compile(r"expected-(error|warning|note|remark)")


@dataclass
class Expected:
    severity: str
    pattern: re.Pattern
    text: str
    line: int | None  # None: @unknown
    comment_line: int
    comment_column: int
    matched: bool = False


@dataclass(frozen=True)
class Problem:
    """A mismatch, located at (line, column) of the checked file (0: no location)."""

    line: int
    column: int
    message: str


def parse_expected(lines: list[str]) -> tuple[list[Expected], list[Problem]]:
    """The expectations in a chunk's lines (1-based), and malformed `expected-*` comments.

    As in mlir-opt, every line without an expectation is a "plain" line: `@above` means the
    last plain line before the comment, `@below` the next one after it.
    """
    expected: list[Expected] = []
    problems: list[Problem] = []
    below: list[Expected] = []
    last_plain = 0
    for number, line in enumerate(lines, start=1):
        marker = _MARKER.search(line)
        match = _EXPECTED.search(line) if marker else None
        if match is None:
            if marker is not None:
                problems.append(Problem(number, marker.start() + 1, "expected '{{' and '}}' around the expected text"))
            for e in below:
                e.line = number
            below, last_plain = [], number
            continue
        where = match.group("where")
        try:
            pattern = _pattern(match.group("text"), bool(match.group("re")))
        except re.error as e:
            problems.append(Problem(number, marker.start() + 1, f"invalid regex in expected-{match.group('severity')}-re: {e}"))
            continue
        item = Expected(
            match.group("severity"),
            pattern,
            match.group("text"),
            _target(where, number, last_plain, len(lines)),
            number,
            marker.start() + 1,
        )
        expected.append(item)
        if where == "below":
            below.append(item)
    return expected, problems


def check(expected: list[Expected], produced: list[Diagnostic], source_name: str) -> list[Problem]:
    """Mismatches between `expected` (marked as they match) and `produced`."""
    problems: list[Problem] = []
    for diag in produced:
        where = diag.file_line_col
        line, column = (where[1], where[2]) if where and where[0] == source_name else (None, 0)
        candidates = [e for e in expected if not e.matched and e.line == line and e.pattern.search(diag.message)]
        hit = next((e for e in candidates if e.severity == diag.severity), None)
        if hit is not None:
            hit.matched = True
        elif candidates:
            near = candidates[0]
            problems.append(Problem(near.comment_line, near.comment_column, f"'{diag.severity}' diagnostic emitted when expecting a '{near.severity}'"))
        else:
            problems.append(Problem(line or 0, column, f"unexpected {diag.severity}: {diag.message}"))
    for e in expected:
        if not e.matched:
            problems.append(Problem(e.comment_line, e.comment_column, f'expected {e.severity} "{e.text}" was not produced'))
    return problems


def _target(where: str | None, number: int, last_plain: int, count: int) -> int | None:
    if where is None:
        return number
    if where == "unknown":
        return None
    if where == "above":
        return last_plain
    if where == "below":
        return count + 1  # until the next plain line resolves it; dangling, it never matches
    return number + int(where)


def _pattern(text: str, is_regex: bool) -> re.Pattern:
    """Literal text, or (for -re) literal text with `{{regex}}` parts; re.error if malformed."""
    if not is_regex:
        return re.compile(re.escape(text))
    parts = re.split(r"\{\{(.*?)\}\}", text)
    return re.compile("".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts)))
