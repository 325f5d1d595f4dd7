"""Write diagnostics to stderr the way mlir-opt does: `file:line:col: severity: message`,
then the source line and a caret under the column when the line is known."""
from __future__ import annotations

import sys

from meshir.dialect.diagnostics import Diagnostic, format_location


class Reporter:
    """Prints diagnostics of one input, echoing its lines."""

    def __init__(self, source_name: str, lines: list[str], stream=None):
        self.source_name, self.lines = source_name, lines
        self.stream = stream or sys.stderr

    def diagnostic(self, diag: Diagnostic) -> None:
        where = diag.file_line_col
        if where and where[0] == self.source_name:
            self.at(where[1], where[2], diag.severity, diag.message)
        else:
            self.write(f"{format_location(diag.location)}: {diag.severity}: {diag.message}")

    def at(self, line: int, column: int, severity: str, message: str) -> None:
        """A message at (line, column) of this input; line 0 means no position."""
        if line <= 0:
            self.write(f"{self.source_name}: {severity}: {message}")
            return
        text = f"{self.source_name}:{line}:{column}: {severity}: {message}"
        if column > 0 and line <= len(self.lines):
            text += f"\n{self.lines[line - 1]}\n{' ' * (column - 1)}^"
        self.write(text)

    def write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
