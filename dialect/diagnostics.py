"""Errors and diagnostics in MLIR's format: `file:line:col: error: message`."""
from __future__ import annotations

import re
from dataclasses import dataclass

_FILE_LOC = re.compile(r'"([^"]*)":(\d+):(\d+)')


class MeshIRError(Exception):
    """Every error MeshIR reports to users: a located, human-readable message.

    `diagnostics` keeps the located Diagnostics the message was made from (empty when the
    error has no location), so drivers can re-report them one by one - e.g. `meshir-opt
    --verify-diagnostics` matches them against `expected-error` comments.
    """

    def __init__(self, message: str = "", diagnostics=()):
        super().__init__(message)
        self.diagnostics: tuple = tuple(diagnostics)


class MeshIRTypeError(MeshIRError, TypeError):
    """A MeshIRError where Python's protocols expect a TypeError (`bool(tensor)`, a wrong
    argument type), so `except TypeError` in user code and libraries keeps working."""


class MeshIRValueError(MeshIRError, ValueError):
    """A MeshIRError where callers conventionally catch ValueError (a bad value of the right
    type: a malformed mesh string, an unknown dtype name)."""


class MeshIRKeyError(MeshIRError, KeyError):
    """A MeshIRError where a mapping protocol expects KeyError (a missing dim or argument).

    KeyError's str() quotes its message; ours reads like every other MeshIRError."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class CheckpointError(MeshIRError):
    """A checkpoint that cannot be restored (missing, unfinished, damaged, or not matching what
    it is restored into). The message names the checkpoint (directory and step) and every
    problem found; `reason` is the message without the location in front."""

    def __init__(self, message: str = "", diagnostics=()):
        super().__init__(message, diagnostics)
        self.reason = message


class MeshIRWarning(UserWarning):
    """Something MeshIR did differently from what the user wrote, without failing: e.g. layout
    rules naming mesh axes the mesh lacks, ignored as Mesh-TensorFlow ignored them. Warned at
    the user's call (`call_site.warn_at_call_site`); `warnings.simplefilter("error",
    mi.MeshIRWarning)` turns every one into an error."""


class VerifyError(Exception):
    """Raised inside an op's verifier; the driver attaches the op's location."""


def _file_line_col(loc) -> tuple[str, int, int] | None:
    """The innermost `file:line:col` of a file, name, call-site or fused location."""
    match = _FILE_LOC.search(str(loc)) if loc is not None else None
    return (match.group(1), int(match.group(2)), int(match.group(3))) if match else None


def format_location(loc) -> str:
    """`file:line:col` for locations that have one, MLIR's text otherwise."""
    flc = _file_line_col(loc)
    if flc:
        return f"{flc[0]}:{flc[1]}:{flc[2]}"
    return "<unknown>" if loc is None else str(loc)


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic: where, how severe, what."""

    location: object  # an ir.Location, or None
    message: str
    severity: str = "error"

    @property
    def file_line_col(self) -> tuple[str, int, int] | None:
        """(file, line, column) of the location, None when it has no file position."""
        return _file_line_col(self.location)

    @property
    def line(self) -> int | None:
        flc = _file_line_col(self.location)
        return flc[1] if flc else None

    def __str__(self) -> str:
        return f"{format_location(self.location)}: {self.severity}: {self.message}"


def located_error(location, message: str) -> MeshIRError:
    """A MeshIRError `file:line:col: error: message` that carries its Diagnostic (so
    meshir-opt reports it at that line)."""
    diagnostic = Diagnostic(location, message)
    return MeshIRError(str(diagnostic), [diagnostic])


def raise_diagnostics(diags: list[Diagnostic]) -> None:
    """Raise one MeshIRError carrying every error diagnostic, if there is any."""
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise MeshIRError("\n".join(str(d) for d in errors), diags)
