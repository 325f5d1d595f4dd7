"""How far this process has got: the count of executable calls, for the watchdog.

Every `Executable` call in a program over several processes is a step all processes take
together (its collectives wait for every device), so a process whose count stays behind the
others' for long has not arrived. Kept apart from the watchdog so the call path imports a
counter and nothing else.
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
