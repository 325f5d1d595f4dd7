"""Source locations for ops built from Python: the user's call site, not MeshIR's internals.

Errors then point at the line of the user's program that built the offending op. The frame
walk is dialect/call_site.py's, shared with the runtime and the interpreter.
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.call_site import call_site, call_site_text, user_error, user_frame  # noqa: F401
from meshir.dialect.diagnostics import MeshIRError


def call_site_location(name: str | None = None) -> ir.Location:
    """A file:line:col location of the user's call (needs an active context)."""
    site = call_site()
    if site is None:
        return ir.Location.unknown()
    loc = ir.Location.file(*site)
    return ir.Location.name(name, childLoc=loc) if name else loc


def describe_call_site() -> str:
    """`file:line:col` of the user's call, for error messages raised before any op exists."""
    return call_site_text()


def located_error(message: str, cls: type = MeshIRError):
    """A MeshIRError (or the subclass `cls`) at the user's call site, for failures found
    before any op exists."""
    return user_error(message, cls)
