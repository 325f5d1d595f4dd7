"""Source locations for ops built from Python: the user's call site, not MeshIR's internals.

Errors then point at the line of the user's program that built the offending op.
"""
from __future__ import annotations

import sys

from meshir._jax_private import ir


def _is_internal(module_name: str) -> bool:
    return module_name == "meshir" or module_name.startswith("meshir.")


def user_frame():
    """The innermost stack frame outside the meshir package."""
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
    return frame


def call_site_location(name: str | None = None) -> ir.Location:
    """A file:line:col location of the user's call (needs an active context)."""
    frame = user_frame()
    if frame is None:
        return ir.Location.unknown()
    line, col = frame.f_lineno, 1
    try:
        positions = list(frame.f_code.co_positions())
        index = frame.f_lasti // 2
        if 0 <= index < len(positions) and positions[index][2] is not None:
            line, col = positions[index][0] or line, positions[index][2] + 1
    except (AttributeError, IndexError):
        pass
    loc = ir.Location.file(frame.f_code.co_filename, line, col)
    return ir.Location.name(name, childLoc=loc) if name else loc


def describe_call_site() -> str:
    """`file:line` of the user's call, for error messages raised before any op exists."""
    frame = user_frame()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"


def located_error(message: str):
    """A MeshIRError at the user's call site, for failures found before any op exists."""
    from meshir.dialect import MeshIRError, get_context
    from meshir.dialect.diagnostics import format_location

    with get_context():
        return MeshIRError(f"{format_location(call_site_location())}: error: {message}")
