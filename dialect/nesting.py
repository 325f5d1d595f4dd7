"""Refuse IR text nested deeper than MAX_NESTING before MLIR parses it.

MLIR's parser recurses once per nested region, attribute or type; at a few thousand levels it
overflows the C stack and the process dies (and the Python walks over the IR would exceed
the recursion limit long before). No real program nests anywhere near MAX_NESTING brackets,
so a cheap scan of the text refuses deeper input with a located error (docs/ir-reference.md).
"""
from __future__ import annotations

import re

#: Deepest bracket nesting (`{`, `(`, `[`, `<` together) MeshIR accepts in IR text.
MAX_NESTING = 200

# Strings and comments are skipped whole; `->` is an arrow, not a closing `>`.
_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[{(\[<]|[})\]>]')
_OPENING = frozenset("{([<")


def nesting_problem(text: str) -> tuple[int, int, str] | None:
    """(line, column, message) where `text` first nests deeper than MAX_NESTING, else None."""
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group(0)
        if token in _OPENING:
            depth += 1
            if depth > MAX_NESTING:
                offset = match.start()
                line = text.count("\n", 0, offset) + 1
                column = offset - (text.rfind("\n", 0, offset) + 1) + 1
                return line, column, (
                    f"'{token}' nests deeper than {MAX_NESTING} levels of brackets; MeshIR refuses "
                    f"such input before parsing (MLIR's parser would overflow its stack)")
        elif len(token) == 1 and depth > 0:
            depth -= 1
    return None
