"""Run fuzz cases fast and safely: in a worker process (worker.py) that is restarted after a
native crash, a hang or every RESTART_EVERY cases, and re-check findings in a fresh process."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

from outcomes import CRASH, HANG, classify, signature

HERE = os.path.dirname(os.path.abspath(__file__))
RESTART_EVERY = 1500  # bounds the memory one MLIR context accumulates


class Result(dict):
    """{"outcome", "signature", "rc", "stdout", "stderr"} of one run."""

    @property
    def outcome(self) -> str:
        return self["outcome"]


class Worker:
    """One worker process running cases of one tree; restarts itself when it dies."""

    def __init__(self, tree: str, timeout: float = 20.0):
        self.tree, self.timeout = tree, timeout
        self.proc = None
        self.registry: dict = {}
        self.runs = self.restarts = 0

    def run(self, args: list[str], text: str) -> Result:
        """Run one case: args for meshir-opt, text on its stdin."""
        if self.proc is None or self.runs >= RESTART_EVERY:
            self._start()
        self.runs += 1
        self.proc.stdin.write(json.dumps({"args": args, "text": text}) + "\n")
        self.proc.stdin.flush()
        line = self._read_line(self.timeout)
        if line is None:  # hang: past the limit
            self.close()
            return Result(outcome=HANG, signature=f"{HANG}:", rc=None, stdout="", stderr="")
        if line == "":  # the process died: a native crash
            rc = self.proc.wait()
            self.proc = None
            return Result(outcome=CRASH, signature=f"{CRASH}:signal {-rc}", rc=rc, stdout="", stderr="")
        return Result(json.loads(line))

    def _start(self) -> None:
        self.close()
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "worker.py"), self.tree, str(write_fd)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(write_fd,), text=True, start_new_session=True)
        os.close(write_fd)
        self.answers, self.buffer = read_fd, b""
        self.runs, self.restarts = 0, self.restarts + 1
        line = self._read_line(120.0)
        if not line:
            raise RuntimeError(f"fuzz worker for {self.tree} did not start")
        self.registry = json.loads(line)

    def _read_line(self, timeout: float) -> str | None:
        """The next answer line; '' when the worker died, None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.answers], [], [], left)[0]:
                return None
            chunk = os.read(self.answers, 1 << 16)
            if not chunk:
                return ""
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            os.close(self.answers)
            self.proc = None

    def ensure_started(self) -> dict:
        if self.proc is None:
            self._start()
        return self.registry


def recheck(tree: str, args: list[str], text: str, timeout: float = 60.0) -> Result:
    """Run one case as the real command line does, in a fresh process (no in-process state)."""
    env = dict(os.environ, MESHIR_DEBUG="1")
    try:
        done = subprocess.run([sys.executable, os.path.join(HERE, "tree_import.py"), tree, *args],
                              input=text, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return Result(outcome=HANG, signature=f"{HANG}:", rc=None, stdout="", stderr="")
    outcome = classify(done.returncode, done.stderr)
    return Result(outcome=outcome, signature=signature(outcome, done.stderr), rc=done.returncode,
                  stdout=done.stdout[-2000:], stderr=done.stderr[-6000:])
