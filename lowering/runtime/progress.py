"""How far this process has got: the count of executable calls, for the watchdog.

Every `Executable` call in a program over several processes is a step all processes take
together (its collectives wait for every device), so a process whose count stays behind the
others' for long has not arrived. The runtime counts (`Executable.__call__`); the
multi-process watchdog (meshir.distributed, which re-exports this module as
`meshir.distributed.progress`) reads the count, so the call path imports a counter and
nothing of meshir.distributed.
"""
from __future__ import annotations

#: Executable calls started in this process, and the function of the last one.
calls = 0
last_function = ""


def called(function: str) -> None:
    """Count one call of `@function` (from `Executable.__call__`)."""
    global calls, last_function
    calls += 1
    last_function = function
