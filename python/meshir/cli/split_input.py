"""`--split-input-file[=MARKER]`: cut the input at marker lines (`// -----` by default) into
independent chunks.

A marker is a line of its own (surrounding blanks allowed); mlir-opt also cuts at a marker in
the middle of a line. Each chunk is padded with the newlines that precede it, so the line
numbers of its diagnostics (and of its `expected-*` comments) are those of the original file;
mlir-opt says "within split at file:N offset :l:c" instead, which is harder to follow.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SPLIT_MARKER = "// -----"


@dataclass(frozen=True)
class Chunk:
    text: str  # padded: line N of `text` is line N of the input file
    first_line: int  # 1-based line of the chunk's first line in the file

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def split_input(text: str, marker: str | None) -> list[Chunk]:
    """The chunks of `text` cut at `marker` lines: one chunk when `marker` is None."""
    if marker is None:
        return [Chunk(text, 1)]
    marker_line = re.compile(r"[ \t]*" + re.escape(marker.strip()) + r"[ \t]*")
    chunks, start, lines = [], 0, text.split("\n")
    for i, line in enumerate(lines + [None]):
        if line is None or marker_line.fullmatch(line):
            body = "\n".join(lines[start:i])
            chunks.append(Chunk("\n" * start + body, start + 1))
            start = i + 1
    return chunks
