"""`--split-input-file`: cut the input at `// -----` lines into independent chunks.

Each chunk is padded with the newlines that precede it, so the line numbers of its
diagnostics (and of its `expected-*` comments) are those of the original file; mlir-opt
says "within split at file:N offset :l:c" instead, which is harder to follow.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SPLIT_MARKER = "// -----"
_MARKER_LINE = re.compile(r"^[ \t]*// -----[ \t]*$")


@dataclass(frozen=True)
class Chunk:
    text: str  # padded: line N of `text` is line N of the input file
    first_line: int  # 1-based line of the chunk's first line in the file

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def split_input(text: str, split: bool) -> list[Chunk]:
    """The chunks of `text`: one when `split` is false."""
    if not split:
        return [Chunk(text, 1)]
    chunks, start, lines = [], 0, text.split("\n")
    for i, line in enumerate(lines + [SPLIT_MARKER]):
        if i == len(lines) or _MARKER_LINE.match(line):
            body = "\n".join(lines[start:i])
            chunks.append(Chunk("\n" * start + body, start + 1))
            start = i + 1
    return chunks
