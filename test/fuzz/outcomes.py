"""What one meshir-opt run says about MeshIR: the outcome classes and a signature for dedup.

ok and diagnosed are fine; every other class is a bug on input meshir-opt can diagnose:
crash (killed by a signal), hang (past the time limit), traceback (an exception escaped
main, or a Python traceback printed), internal (meshir-opt's "internal error" line, exit 2),
undiagnosed (failed without any error message).
"""
from __future__ import annotations

import re

OK, DIAGNOSED = "ok", "diagnosed"
CRASH, HANG, TRACEBACK, INTERNAL, UNDIAGNOSED = "crash", "hang", "traceback", "internal", "undiagnosed"
CLASSES = (OK, DIAGNOSED, CRASH, HANG, TRACEBACK, INTERNAL, UNDIAGNOSED)
BUGS = frozenset({CRASH, HANG, TRACEBACK, INTERNAL, UNDIAGNOSED})


def classify(rc: int | None, stderr: str, escaped: str | None = None) -> str:
    """The class of a finished run: exit code (negative: killed by that signal), its stderr,
    and the exception that escaped main (in-process runs only)."""
    if rc is not None and rc < 0:
        return CRASH
    if escaped is not None:
        return TRACEBACK
    if "meshir-opt: error: internal error" in stderr or rc == 2:
        return INTERNAL
    if "Traceback (most recent call last)" in stderr:
        return TRACEBACK
    if rc == 0:
        return OK
    if rc == 1 and re.search(r"(^|: )error: ", stderr, re.M):
        return DIAGNOSED
    return UNDIAGNOSED if rc == 1 else INTERNAL


def signature(outcome: str, stderr: str) -> str:
    """A short key that stays the same for the same bug: the exception type and the innermost
    MeshIR frame of a traceback, or the first line of a native abort, with numbers elided."""
    frames = re.findall(r'File "[^"]*/([\w./]+\.py)", line \d+, in (\w+)', stderr)
    exc = re.findall(r"^(\w+(?:Error|Exception|Exit)\w*):", stderr, re.M)
    internal = re.search(r"meshir-opt: error: internal error: (\w+)", stderr)
    if outcome in (INTERNAL, TRACEBACK) and (frames or internal):
        where = next((f"{f}:{fn}" for f, fn in reversed(frames) if "site-packages" not in f), "")
        kind = exc[-1] if exc else (internal.group(1) if internal else "?")
        return f"{outcome}:{kind}@{where}"
    if outcome == CRASH:
        abort = re.search(r"(Check failed: [^\n]{0,60})", stderr) or re.search(r"(LLVM ERROR: [^\n]{0,60}|Assertion [^\n]{0,60})", stderr)
        text = abort.group(1) if abort else "signal"
        return f"{outcome}:" + re.sub(r"\d+", "N", text)
    first = stderr.strip().splitlines()[0] if stderr.strip() else ""
    return f"{outcome}:" + re.sub(r"\d+", "N", first)[:80]
