"""Silence the echoes of a failed Orbax restore, so a damaged checkpoint is one error line.

When reading one chunk fails, Orbax's restore raises (Checkpoints turns that into a
CheckpointError) and closes its event loop while tensorstore still completes the other
reads: their coroutines are dropped with the chunk's error, and their callbacks find the
loop closed. Python reports both through `sys.unraisablehook` as tracebacks on stderr, some
after the restore has returned; and the futures of those reads, collected later, make asyncio
log "Future exception was never retrieved". `install()` wraps the hook and filters asyncio's
logger once, dropping exactly these reports and passing on everything else. Checkpoints
installs it before its first Orbax call (reading Orbax's metadata fails the same way).
"""
from __future__ import annotations

import logging
import sys

_installed = False
_UNRETRIEVED = ("Future exception was never retrieved", "Task exception was never retrieved")


def _is_echo(unraisable) -> bool:
    error, obj = unraisable.exc_value, unraisable.object
    if isinstance(error, RuntimeError) and str(error) == "Event loop is closed":
        return True
    code = getattr(obj, "cr_code", None)
    return code is not None and "orbax" in code.co_filename


def _raised_in_orbax(error: BaseException | None) -> bool:
    """Whether `error` was raised through Orbax's or tensorstore's code."""
    traceback = getattr(error, "__traceback__", None)
    while traceback is not None:
        filename = traceback.tb_frame.f_code.co_filename
        if "orbax" in filename or "tensorstore" in filename:
            return True
        traceback = traceback.tb_next
    return False


class _UnretrievedRestoreErrors(logging.Filter):
    """asyncio's log of a dropped read's error (the restore already raised the first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(_UNRETRIEVED):
            return True
        error = record.exc_info[1] if record.exc_info else None
        return not _raised_in_orbax(error)


def install() -> None:
    global _installed
    if _installed:
        return
    previous = sys.unraisablehook

    def hook(unraisable):
        if not _is_echo(unraisable):
            previous(unraisable)

    sys.unraisablehook = hook
    logging.getLogger("asyncio").addFilter(_UnretrievedRestoreErrors())
    _installed = True
