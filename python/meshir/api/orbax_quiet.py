"""Silence the echoes of a failed Orbax restore, so a damaged checkpoint is one error line.

When reading one chunk fails, Orbax's restore raises (Checkpoints turns that into a
CheckpointError) and closes its event loop while tensorstore still completes the other
reads: their coroutines are dropped with the chunk's error, and their callbacks find the
loop closed. Python reports both through `sys.unraisablehook` as tracebacks on stderr, some
after the restore has returned. `install()` wraps the hook once to drop exactly these two
reports and pass on everything else.
"""
from __future__ import annotations

import sys

_installed = False


def _is_echo(unraisable) -> bool:
    error, obj = unraisable.exc_value, unraisable.object
    if isinstance(error, RuntimeError) and str(error) == "Event loop is closed":
        return True
    code = getattr(obj, "cr_code", None)
    return code is not None and "orbax" in code.co_filename


def install() -> None:
    global _installed
    if _installed:
        return
    previous = sys.unraisablehook

    def hook(unraisable):
        if not _is_echo(unraisable):
            previous(unraisable)

    sys.unraisablehook = hook
    _installed = True
