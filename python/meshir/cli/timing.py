"""`--mlir-timing`: mlir-opt's execution time report, for each input (each chunk of a split one).

The report has mlir-opt's shape (`mlir/lib/Support/Timing.cpp`, tree display): a banner,
`Total Execution Time`, then `----Wall Time----  ----Name----` and one line per timer -
`Parser` (parsing and the verifier after it, as in mlir-opt), the passes, `Output` (printing or
writing bytecode) - then `Rest` and `Total`. The passes' timers are MLIR's own: the pipeline
runs with MLIR's pass timing on, whose report MLIR writes to file descriptor 2 when the pass
manager goes away; it is captured there and its pass lines (nested pipelines, analyses, MeshIR's
verifier between passes as `MeshIRVerify`) are put between `Parser` and `Output`.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field

_BANNER = "... Execution time report ..."
# `  %8.4f (%5.1f%%)  ` before the indented name; a user-time column may come first.
_LINE = re.compile(r"^(?:\s+-?\d+\.\d+ \(\s*-?[\d.]+%\))?\s+(-?\d+\.\d+) \(\s*-?[\d.]+%\)  ( *)(\S.*)$")


@dataclass
class Timer:
    name: str
    wall: float = 0.0
    children: list["Timer"] = field(default_factory=list)


class Timing:
    """The timers of one input; `report()` is mlir-opt's text."""

    def __init__(self) -> None:
        self.root = Timer("Total")
        self._start = time.perf_counter()

    def measure(self, name: str):
        """Context manager adding the time spent inside it to the top-level timer `name`."""
        return _Measure(self._child(name))

    def add_mlir_report(self, text: str, hidden: str) -> None:
        """Add the pass timers of MLIR's report `text`, leaving out the passes named `hidden`."""
        for timer in _parse_mlir_report(text, hidden):
            self.root.children.append(timer)

    def report(self) -> str:
        total = time.perf_counter() - self._start
        lines = ["===" + "-" * 73 + "===", " " * ((80 - len(_BANNER)) // 2) + _BANNER, "===" + "-" * 73 + "===",
                 f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]

        def entry(name: str, wall: float, indent: int) -> None:
            percent = 100.0 * wall / total if total > 0 else 0.0
            lines.append(f"  {wall:8.4f} ({percent:5.1f}%)  {' ' * indent}{name}")

        def tree(timer: Timer, indent: int) -> None:
            entry(timer.name, timer.wall, indent)
            for child in timer.children:
                tree(child, indent + 2)

        for child in self.root.children:
            tree(child, 0)
        entry("Rest", total - sum(c.wall for c in self.root.children), 0)
        entry("Total", total, 0)
        return "\n".join(lines) + "\n"

    def _child(self, name: str) -> Timer:
        for child in self.root.children:
            if child.name == name:
                return child
        child = Timer(name)
        self.root.children.append(child)
        return child


class _Measure:
    def __init__(self, timer: Timer):
        self.timer = timer

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.timer.wall += time.perf_counter() - self._start
        return False


def capture_fd2(action) -> str:
    """Run `action()` with file descriptor 2 sent to a temporary file; return what was written
    there (what MLIR's C++ code prints to stderr)."""
    sys.stderr.flush()
    with tempfile.TemporaryFile() as captured:
        saved = os.dup(2)
        try:
            os.dup2(captured.fileno(), 2)
            action()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return captured.read().decode("utf-8", errors="replace")


def _parse_mlir_report(text: str, hidden: str) -> list[Timer]:
    """The top-level timers of MLIR's tree report (without `Rest` and `Total`)."""
    lines = text.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if "----Name----" in line), len(lines))
    top: list[Timer] = []
    stack: list[tuple[int, Timer]] = []  # (indent, timer) of the open ancestors
    for line in lines[start:]:
        match = _LINE.match(line)
        if match is None:
            continue
        wall, indent, name = float(match.group(1)), len(match.group(2)), match.group(3).rstrip()
        if indent == 0 and name in ("Rest", "Total"):
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        timer = Timer(name, wall)
        if name != hidden:
            (stack[-1][1].children if stack else top).append(timer)
        stack.append((indent, timer))
    return top
