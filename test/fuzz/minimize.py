"""Shrink a failing case while it keeps failing the same way: arguments first, then the
passes of the pipeline, then delta debugging (ddmin) on lines, then on tokens."""
from __future__ import annotations

import re
import time

from mutate import tokens

WRAPPED = "--pass-pipeline=builtin.module("


def top_level_elements(pipeline: str) -> list[str]:
    """`a{x=1},func.func(b,c),d` -> its elements at depth 0."""
    elements, depth, start = [], 0, 0
    for i, c in enumerate(pipeline):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            elements.append(pipeline[start:i])
            start = i + 1
    return elements + [pipeline[start:]]


def ddmin(units: list[str], fails, budget) -> list[str]:
    """Zeller's ddmin: a 1-minimal sublist of `units` for which `fails(sublist)` holds, within
    the evaluations `budget()` still allows."""
    n = 2
    while len(units) >= 2 and budget():
        size = max(1, len(units) // n)
        chunks = [units[i:i + size] for i in range(0, len(units), size)]
        for i in range(len(chunks)):
            if not budget():
                return units
            rest = [u for j, c in enumerate(chunks) if j != i for u in c]
            if rest and fails(rest):
                units, n = rest, max(n - 1, 2)
                break
        else:
            if n >= len(units):
                break
            n = min(len(units), n * 2)
    return units


_REPEAT = re.compile(r"(.{1,40}?)\1{7,}", re.S)


def _halve_repeats(text: str, fails, budget) -> str:
    """Halve runs of a repeated piece (deep nesting: `module {` x 30000), all runs together
    first (openings and closings stay balanced), then one at a time."""
    changed = True
    while changed and budget():
        changed = False
        runs = list(_REPEAT.finditer(text))
        for chosen in [runs] + [[r] for r in runs]:
            if not chosen or not budget():
                continue
            new, end = [], 0
            for m in chosen:
                unit = m.group(1)
                new += [text[end:m.start()], unit * (len(m.group(0)) // len(unit) // 2)]
                end = m.end()
            candidate = "".join(new) + text[end:]
            if fails(candidate):
                text, changed = candidate, True
                break
    return text


def minimize(args: list[str], text: str, same_failure, max_runs: int = 400, max_seconds: float = 120.0):
    """(args, text) no larger than the input, for which `same_failure(args, text)` still holds."""
    runs, deadline = [0], time.monotonic() + max_seconds

    def budget() -> bool:
        return runs[0] < max_runs and time.monotonic() < deadline

    def check(a, t) -> bool:
        runs[0] += 1
        return same_failure(a, t)

    for i in reversed(range(len(args))):
        if budget() and check(args[:i] + args[i + 1:], text):
            args = args[:i] + args[i + 1:]
    for i, arg in enumerate(args):
        if arg.startswith(WRAPPED) and arg.endswith(")"):
            def with_elements(elements, i=i):
                return args[:i] + [WRAPPED + ",".join(elements) + ")"] + args[i + 1:]
            elements = ddmin(top_level_elements(arg[len(WRAPPED):-1]), lambda es: check(with_elements(es), text), budget)
            args = with_elements(elements)
    text = _halve_repeats(text, lambda t: check(args, t), budget)
    lines = ddmin(text.split("\n"), lambda ls: check(args, "\n".join(ls)), budget)
    text = "\n".join(lines)
    toks = ddmin(tokens(text), lambda ts: check(args, "".join(ts)), budget)
    return args, "".join(toks)
