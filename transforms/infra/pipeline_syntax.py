"""The text of a pass pipeline, parsed like MLIR's textual pipeline parser.

    pipeline ::= element (',' element)*
    element  ::= name ('{' options '}')?          a pass, with options
               | name '(' pipeline? ')'           a nested pipeline on ops named `name`
    options  ::= (key ('=' value)?)*              whitespace separated; a value may be
                                                  "quoted", 'quoted' or {braced}

`builtin.module(a, b)` and `a,b` mean the same at the top. Elements keep their exact source
text, so passes that MeshIR does not own are handed to MLIR as written. Errors carry the
column, so the driver can point at the offending character.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.nesting import MAX_NESTING

_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_CLOSING = {"{": "}", "(": ")", '"': '"', "'": "'"}


class PipelineError(MeshIRError):
    """A pipeline that cannot be built: bad syntax, unknown pass or option. Located by column."""

    def __init__(self, message: str, source: str, column: int):
        self.message, self.source, self.column = message, source, column
        super().__init__(self.render())

    def render(self, source_name: str = "<pass-pipeline>") -> str:
        """`<pass-pipeline>:1:col: error: message`, the pipeline text and a caret."""
        return f"{source_name}:1:{self.column}: error: {self.message}\n{self.source}\n{' ' * (self.column - 1)}^"


@dataclass(frozen=True)
class PassOptionText:
    """`key=value` as written; value None for a bare `key`."""

    key: str
    value: str | None
    column: int


@dataclass(frozen=True)
class PipelineElement:
    """One pass (options not None or no children) or one nested pipeline (children not None)."""

    name: str
    options: tuple[PassOptionText, ...] | None
    children: tuple["PipelineElement", ...] | None
    text: str  # exactly as written
    column: int  # 1-based, of the name in `source`
    source: str  # the whole pipeline text the element comes from

    def error(self, message: str, column: int | None = None) -> PipelineError:
        return PipelineError(message, self.source, column or self.column)

    def option_dict(self) -> dict[str, str | None]:
        return {o.key: o.value for o in self.options or ()}


def parse_pipeline(text: str) -> tuple[PipelineElement, ...]:
    """The top-level elements of `text`, with a `builtin.module(...)` wrapper removed."""
    parser = _Parser(text)
    elements = parser.pipeline(closing=None)
    parser.skip_space()
    if parser.pos < len(text):
        parser.fail("unbalanced ')'" if text[parser.pos] == ")" else "expected ',' or the end of the pipeline")
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].children is not None:
        return elements[0].children
    return elements


class _Parser:
    def __init__(self, text: str):
        self.text, self.pos = text, 0
        self.depth = 0  # nested pipelines open at pos (recursion: bounded by MAX_NESTING)

    def fail(self, message: str, pos: int | None = None):
        raise PipelineError(message, self.text, (self.pos if pos is None else pos) + 1)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, char: str) -> bool:
        self.skip_space()
        return self.text.startswith(char, self.pos)

    def pipeline(self, closing: str | None) -> tuple[PipelineElement, ...]:
        self.skip_space()
        if self.text.startswith(closing, self.pos) if closing else self.pos == len(self.text):
            return ()
        elements = [self.element()]
        while self.peek(","):
            self.pos += 1
            elements.append(self.element())
        return tuple(elements)

    def element(self) -> PipelineElement:
        self.skip_space()
        start = self.pos
        match = _NAME.match(self.text, self.pos)
        if not match:
            self.fail("expected a pass name or an op name")
        self.pos = match.end()
        options = children = None
        if self.peek("{"):
            options = self.options(self.braced())
        elif self.peek("("):
            self.depth += 1
            if self.depth > MAX_NESTING:
                self.fail(f"pipeline nested deeper than {MAX_NESTING} levels")
            self.pos += 1
            children = self.pipeline(closing=")")
            self.depth -= 1
            if not self.peek(")"):
                self.fail("expected ',' or ')'" if self.pos < len(self.text) else "unbalanced '(': expected ')'")
            self.pos += 1
        return PipelineElement(match.group(0), options, children, self.text[start : self.pos], start + 1, self.text)

    def braced(self) -> tuple[str, int]:
        """The text between a '{' at pos and its matching '}' (nesting and quotes respected)."""
        open_pos = self.pos
        try:
            self.pos = _skip_group(self.text, open_pos)
        except _Unclosed as e:
            self.fail(e.message, e.pos)
        return self.text[open_pos + 1 : self.pos - 1], open_pos + 1

    def options(self, braced: tuple[str, int]) -> tuple[PassOptionText, ...]:
        body, offset = braced
        result: list[PassOptionText] = []
        try:
            tokens = list(_split_top_level(body))
        except _Unclosed as e:
            self.fail(e.message, offset + e.pos)
        for token, at in tokens:
            key, eq, value = token.partition("=")
            column = offset + at + 1
            if not key:
                self.fail("expected an option name before '='", offset + at)
            if any(o.key == key for o in result):
                self.fail(f"option '{key}' is given twice", offset + at)
            result.append(PassOptionText(key, _unquote(value) if eq else None, column))
        return tuple(result)


class _Unclosed(Exception):
    """A quote or bracket opened at `pos` that the text never closes."""

    def __init__(self, opener: str, pos: int):
        super().__init__(opener)
        self.pos = pos
        self.message = "unterminated quote" if opener in "\"'" else f"unbalanced '{opener}': expected '{_CLOSING[opener]}'"


def _skip_group(text: str, pos: int) -> int:
    """Index just past the group opened at `pos` ('{', '(', or a quote)."""
    stack = [pos]
    pos += 1
    while stack:
        if pos >= len(text):
            raise _Unclosed(text[stack[-1]], stack[-1])
        char, closer = text[pos], _CLOSING[text[stack[-1]]]
        if closer in "\"'":
            if char == closer:
                stack.pop()
        elif char == closer:
            stack.pop()
        elif char in _CLOSING:
            stack.append(pos)
        pos += 1
    return pos


def _split_top_level(body: str):
    """Whitespace-separated tokens of `body` and their offsets; quotes and braces group."""
    pos = 0
    while pos < len(body):
        if body[pos].isspace():
            pos += 1
            continue
        start = pos
        while pos < len(body) and not body[pos].isspace():
            pos = _skip_group(body, pos) if body[pos] in _CLOSING else pos + 1
        yield body[start:pos], start


def _unquote(value: str) -> str:
    if len(value) >= 2 and (value[0], value[-1]) in {('"', '"'), ("'", "'"), ("{", "}")}:
        return value[1:-1]
    return value
