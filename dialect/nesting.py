"""Refuse IR text nested deeper than MAX_NESTING before MLIR parses it.

MLIR's parser recurses once per nested region, attribute or type; at a few thousand levels it
overflows the C stack and the process dies (and the Python walks over the IR would exceed
the recursion limit long before). No real program nests anywhere near MAX_NESTING brackets,
so a cheap scan of the text refuses deeper input with a located error (docs/ir-reference.md).

What MeshIR prints must read back, so the scan counts the nesting the text has once printed:
- a use of a type or attribute alias (`!t = tuple<...>`, `#loc3 = loc(callsite(...))`) nests
  as deep as the alias's definition, expanded (MLIR prints most aliases inline; its printer
  also overflowed its stack on a chain of 50,000 aliases, each using the one before);
- input that is not one top-level `module` op is wrapped in one, a level more (`wrapped`).
meshir-opt also refuses to print text nested deeper than MAX_NESTING (passes add levels).
"""
from __future__ import annotations

import re

#: Deepest bracket nesting (`{`, `(`, `[`, `<` together) MeshIR accepts in IR text.
MAX_NESTING = 200

# Strings and comments are skipped whole; `->` is an arrow, not a closing `>`.
_SKIPPED_OR_BRACKET = r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[{(\[<]|[})\]>]'
# An alias is defined at the start of a line; a dialect's own `!dialect.type` or
# `#dialect<...>` is no alias.
_DEFINITION = r'^[ \t]*(?P<defined>[!#][A-Za-z_][\w$-]*)[ \t]*=(?!=)'
_USE = r'(?P<used>[!#][A-Za-z_][\w$-]*)(?![\w$.<-])'
_TOKENS = re.compile(_SKIPPED_OR_BRACKET)
_TOKENS_AND_ALIASES = re.compile("|".join([_SKIPPED_OR_BRACKET, _DEFINITION, _USE]), re.MULTILINE)  # slower
_DEFINES_ALIASES = re.compile(_DEFINITION, re.MULTILINE)
_OPENING = frozenset("{([<")


def nesting_problem(text: str, wrapped: bool = False) -> tuple[int, int, str] | None:
    """(line, column, message) where `text` first nests deeper than MAX_NESTING, else None.
    `wrapped`: counting the `module` MLIR wraps around `text` (one level more)."""
    limit = MAX_NESTING - 1 if wrapped else MAX_NESTING
    aliases = _Aliases()
    depth, alias, body_end = 0, None, 0  # alias: whose definition is being read, up to body_end
    tokens = _TOKENS_AND_ALIASES if _DEFINES_ALIASES.search(text) else _TOKENS
    for match in tokens.finditer(text):
        token = match.group(0)
        if alias is not None and depth == 0 and match.start() > body_end:
            alias = None  # a definition is the rest of its line (and what its brackets hold)
        if token in _OPENING:
            depth += 1
            if depth > limit:
                return _where(text, match.start(), _message(token, wrapped))
            if alias is not None:
                aliases.opens(alias, depth)
        elif len(token) == 1:  # a closing bracket
            depth = max(depth - 1, 0)
            if depth == 0 and alias is not None:
                body_end = _line_end(text, match.start())
        elif match.lastgroup == "defined" and depth == 0:
            alias, body_end = match.group("defined"), _line_end(text, match.start())
            aliases.define(alias)
        elif match.lastgroup is not None:  # an alias used
            aliases.use(alias, match.start(), depth, match.group(match.lastgroup))
    for offset, depth, used in aliases.uses:  # now that every alias is defined
        if depth + aliases.expanded(used) > limit:
            return _where(text, offset, _message(used, wrapped, " with its alias expanded (as MLIR prints it)"))
    return None


class _Aliases:
    """The alias definitions of a text, and the uses outside them: how deep each nests."""

    def __init__(self) -> None:
        self.definitions: dict[str, tuple[int, list]] = {}  # alias -> (own depth, [(depth, alias used)])
        self.uses: list[tuple[int, int, str]] = []  # (offset, depth, alias) outside definitions
        self._expanded: dict[str, int] = {}

    def define(self, alias: str) -> None:
        self.definitions[alias] = (0, [])

    def opens(self, alias: str, depth: int) -> None:
        own, used = self.definitions[alias]
        self.definitions[alias] = (max(own, depth), used)

    def use(self, within: str | None, offset: int, depth: int, alias: str) -> None:
        """`alias` used at `depth`, in the definition of `within` (None: outside any)."""
        if within is not None:
            self.definitions[within][1].append((depth, alias))
        else:
            self.uses.append((offset, depth, alias))

    def expanded(self, alias: str) -> int:
        """How deep `alias` nests once every alias in it is expanded (0 if undefined). A
        stack, not recursion: alias chains may be long; a cycle counts once."""
        stack, active = [alias], set()
        while stack:
            name = stack[-1]
            if name in self._expanded or name not in self.definitions:
                stack.pop()
                continue
            own, used = self.definitions[name]
            pending = [u for _, u in used if u not in self._expanded and u in self.definitions and u not in active]
            if pending and name not in active:
                active.add(name)
                stack.extend(pending)
                continue
            stack.pop()
            active.discard(name)
            self._expanded[name] = max([own] + [d + self._expanded.get(u, 0) for d, u in used])
        return self._expanded.get(alias, 0)


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


def _where(text: str, offset: int, message: str) -> tuple[int, int, str]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column, message


def _message(what: str, wrapped: bool, expanded: str = "") -> str:
    if wrapped:
        return (f"'{what}' nests deeper than {MAX_NESTING} levels of brackets{expanded}, counting the "
                f"`module {{ ... }}` MLIR wraps around input that is not one top-level `module` op; MeshIR "
                f"refuses such input (printed, it would not read back)")
    if expanded:
        return (f"'{what}' nests deeper than {MAX_NESTING} levels of brackets{expanded}; MeshIR refuses such "
                f"input (printed, it would not read back)")
    return (f"'{what}' nests deeper than {MAX_NESTING} levels of brackets; MeshIR refuses such input before "
            f"parsing (MLIR's parser would overflow its stack)")
