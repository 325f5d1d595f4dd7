"""`launch_local`: run one program as several processes on this host (the localhost recipe).

On a cluster the scheduler starts one process per host (SLURM, Kubernetes, a TPU pod's
workers) and each calls `mi.distributed.initialize`. On one machine this starts them: the
same command `processes` times, with `JAX_COORDINATOR_ADDRESS` on a free localhost port and
`MESHIR_NUM_PROCESSES`, `MESHIR_PROCESS_ID`, `MESHIR_LOCAL_DEVICES` set, so the program's
`mi.distributed.initialize()` needs no arguments. Process 0 writes to this terminal; the
others' output is kept and shown when they fail. When one process fails, the others are
stopped, and the result says which failed first.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from meshir.dialect.diagnostics import MeshIRValueError


@dataclass
class Finished:
    """One process's end: its exit status and (when captured) its output."""
    process_id: int
    returncode: int
    output: str


def free_port() -> int:
    """A TCP port no program on this host listens on now."""
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def launch_local(command: list[str], processes: int, local_devices: int | None = None, *,
                 timeout: float | None = None, capture: bool = False, env: dict | None = None,
                 port: int | None = None) -> list[Finished]:
    """Run `command` (argv, e.g. [sys.executable, "train.py", ...]) as `processes` processes.

    `capture`: keep every process's output (else process 0's goes to this terminal).
    `timeout`: seconds before every process still running is killed (returncode -9).
    Returns one `Finished` per process, in process order.
    """
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise MeshIRValueError(f"processes must be a positive int, got {processes!r}")
    base = {**os.environ, **(env or {}), "JAX_COORDINATOR_ADDRESS": f"localhost:{port or free_port()}",
            "MESHIR_NUM_PROCESSES": str(processes)}
    if local_devices is not None:
        base["MESHIR_LOCAL_DEVICES"] = str(local_devices)
    logs = [tempfile.TemporaryFile("w+") if capture or p else None for p in range(processes)]
    children = [subprocess.Popen(command, env={**base, "MESHIR_PROCESS_ID": str(p)},
                                 stdout=logs[p], stderr=subprocess.STDOUT if logs[p] else None)
                for p in range(processes)]
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        _wait(children, deadline)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    results = []
    for p, (child, log) in enumerate(zip(children, logs)):
        text = ""
        if log is not None:
            log.seek(0)
            text = log.read()
            log.close()
        results.append(Finished(p, child.returncode, text))
    return results


def _wait(children: list, deadline: float | None) -> None:
    """Until all exit; once one fails, give the others a few seconds (their watchdogs name
    the failure), then stop them."""
    grace = None
    while any(c.poll() is None for c in children):
        now = time.monotonic()
        if deadline is not None and now > deadline:
            return
        if grace is None and any(c.returncode not in (None, 0) for c in children):
            grace = now + 10
        if grace is not None and now > grace:
            return
        time.sleep(0.05)


def report_failures(results: list[Finished], out=sys.stderr) -> int:
    """Print the output of each process that failed (process 0's was shown already unless
    captured); return the exit status for the launcher: 0, or the first failure's."""
    failed = [r for r in results if r.returncode != 0]
    for r in failed:
        out.write(f"--- process {r.process_id} exited with status {r.returncode}\n")
        if r.output:
            out.write(r.output[-4000:])
    return failed[0].returncode if failed else 0
