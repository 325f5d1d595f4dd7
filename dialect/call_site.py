"""The user's call site: where, in the user's code, a call into MeshIR was written.

Errors a user causes through the Python API start with that `file:line:col`, so they point
at the user's line and not at MeshIR's internals. Pure Python (frames, no MLIR), so the
dialect, the runtime and the builder API share it. `reports_at_call_site` locates, at the
API boundary, the MeshIRErrors that shared code (used by `meshir-opt` too) raises unlocated.
"""
from __future__ import annotations

import functools
import os
import re
import sys
import warnings

from .diagnostics import MeshIRError, MeshIRKeyError, MeshIRWarning

#: A message that already starts with a location (`file:line:col: error: ...`).
_LOCATED = re.compile(r"^[^\n]+?:\d+:\d+: (error|warning|note|remark): ")
#: Prefixes that say "no location": replaced by the call site.
_UNLOCATED = re.compile(r"^(<unknown>|loc\(unknown\)|unknown): (error: )?")


#: Source files of libraries built on MeshIR whose frames errors skip, as meshir's own.
_HIDDEN_FILES: set[str] = set()


def hide_from_error_locations(*files: str) -> None:
    """Errors and warnings raised through these source files (a library's `__file__`) are
    located at the line that called into them, as MeshIR's own frames are: a user of a
    model library sees their call, not the library's `prog.argument` line."""
    _HIDDEN_FILES.update(os.path.abspath(f) for f in files)


def _is_internal(frame) -> bool:
    module_name = frame.f_globals.get("__name__", "")
    if module_name == "meshir" or module_name.startswith("meshir."):
        return True
    return bool(_HIDDEN_FILES) and os.path.abspath(frame.f_code.co_filename) in _HIDDEN_FILES


def user_frame():
    """The innermost stack frame outside the meshir package and the hidden files (None if
    there is none)."""
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame):
        frame = frame.f_back
    return frame


def call_site() -> tuple[str, int, int] | None:
    """(file, line, column) of the user's call: the column of the call expression."""
    frame = user_frame()
    if frame is None:
        return None
    line, col = frame.f_lineno, 1
    try:
        positions = list(frame.f_code.co_positions())
        index = frame.f_lasti // 2
        if 0 <= index < len(positions) and positions[index][2] is not None:
            line, col = positions[index][0] or line, positions[index][2] + 1
    except (AttributeError, IndexError):  # Python < 3.11 has no co_positions
        pass
    return frame.f_code.co_filename, line, col


def call_site_text() -> str:
    """`file:line:col` of the user's call, `<unknown>` outside any user code."""
    site = call_site()
    return f"{site[0]}:{site[1]}:{site[2]}" if site else "<unknown>"


def user_error(message: str, cls: type = MeshIRError) -> MeshIRError:
    """A MeshIRError (or subclass `cls`) located at the user's call site."""
    return cls(f"{call_site_text()}: error: {message}")


def warn_at_call_site(message: str, category: type = MeshIRWarning) -> None:
    """Warn `message` at the user's call site: `warnings.warn` with the stacklevel of the
    innermost frame outside the meshir package, so the warning names the user's line and the
    user's filters (by module and line) apply to it."""
    frame, level = sys._getframe(1), 2  # stacklevel 2 is this function's caller
    while frame is not None and _is_internal(frame):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def is_located(message: str) -> bool:
    return bool(_LOCATED.match(message))


def without_location(message: str) -> str:
    """The message without its leading `file:line:col: error: `, to nest it in another."""
    match = _LOCATED.match(message) or _UNLOCATED.match(message)
    return message[match.end():] if match else message


def locate(error: MeshIRError) -> MeshIRError:
    """`error` with the user's call site in front of its message, unless it has a location.

    The same object when its message is its only argument (type and traceback kept);
    otherwise a plain MeshIRError of the same kind."""
    message = str(error)
    if is_located(message):
        return error
    message = f"{call_site_text()}: error: {_UNLOCATED.sub('', message, count=1)}"
    plain_str = type(error).__str__ in (BaseException.__str__, MeshIRKeyError.__str__)
    if plain_str and len(error.args) == 1:
        error.args = (message,)
        return error
    return MeshIRError(message, getattr(error, "diagnostics", ()))


def reports_at_call_site(fn):
    """Decorate a public entry point: MeshIRErrors without a location that escape it get the
    user's call site (the line that called the entry point)."""

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MeshIRError as e:
            located = locate(e)
            if located is e:
                raise
            raise located from None

    return entry
