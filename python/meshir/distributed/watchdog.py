"""The watchdog: a process that dies or never arrives ends the others, with a message.

Without it a multi-process program whose peer died waits in the next collective until
jax's heartbeat check aborts it (an absl FATAL with a C++ stack), and one whose peer hangs
(alive, but never making the next call) waits forever. A daemon thread in each process
publishes, every `interval` seconds, a heartbeat and its call count (`progress.calls`) in
the `jax.distributed` key-value store, and reads everyone else's:

- a process whose heartbeat stops for `heartbeat_timeout` seconds without saying it exited
  has died or frozen;
- when this process has made no new call for `timeout` seconds and a peer has made fewer
  calls and none for as long, that peer has not arrived at the call this process waits in;
  a peer that exited after fewer calls than this process made never will.

Either way the thread prints one line naming the process, tells the others (who end too,
quoting it), and exits this process with status `EXIT_STATUS` (the main thread may be
blocked inside a collective, where no Python exception can reach it). Process 0 serves the
coordination service, so it lingers until the others have gone: when it vanishes first,
jax aborts the rest with a C++ stack instead of MeshIR's message. A process that exits
normally says so first (atexit) and waits for the others to exit too.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from dataclasses import dataclass, field

from meshir import _jax_private as jp
from meshir.lowering.runtime import progress

#: The exit status of a process the watchdog ends (EX_SOFTWARE would suggest a bug here).
EXIT_STATUS = 75  # EX_TEMPFAIL: the program itself is fine; a peer failed
PREFIX = "meshir/alive/"
FAILED = "meshir/failed/"


def fail(message: str) -> None:
    """Print `message` as MeshIR's error and end this process now."""
    sys.stderr.write(f"meshir: error: {message}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(EXIT_STATUS)


@dataclass
class Peer:
    """What this process last heard from one other process, and when it changed."""
    beat: int = -1
    calls: int = 0
    function: str = ""
    exited: bool = False
    beat_seen: float = field(default_factory=time.monotonic)
    calls_seen: float = field(default_factory=time.monotonic)


class Watchdog(threading.Thread):
    def __init__(self, process_id: int, num_processes: int, timeout: float, heartbeat_timeout: float):
        super().__init__(name="meshir-watchdog", daemon=True)
        self.process_id, self.num_processes = process_id, num_processes
        self.timeout, self.heartbeat_timeout = timeout, heartbeat_timeout
        self.interval = max(0.05, min(1.0, heartbeat_timeout / 5))
        self.peers = {p: Peer() for p in range(num_processes) if p != process_id}
        self.my_calls, self.my_calls_seen = progress.calls, time.monotonic()
        self.beat = 0
        self.stopped = threading.Event()
        self.crashed = False  # an uncaught exception ends this process (sys.excepthook)

    def run(self) -> None:
        client = jp.distributed_client()
        while not self.stopped.wait(self.interval):
            try:
                self.publish(client, "alive")
                entries = client.key_value_dir_get(PREFIX)
            except Exception as e:
                if self.stopped.is_set():
                    return
                fail(f"process {self.process_id}: lost the coordinator (process 0): {str(e).splitlines()[0]}")
            self.check(entries, time.monotonic())

    def fail(self, message: str) -> None:
        """End this process with `message`, after telling the others (module docstring)."""
        client = jp.distributed_client()
        try:
            client.key_value_set(f"{FAILED}{self.process_id}", message, allow_overwrite=True)
            self.publish(client, "fail")
            sys.stderr.write(f"meshir: error: {message}\n")
            sys.stderr.flush()
            deadline = time.monotonic() + (2 * self.heartbeat_timeout if self.process_id == 0 else 0)
            while time.monotonic() < deadline:  # process 0 serves the others: let them go first
                now, failed = time.monotonic(), set()
                for key, value in client.key_value_dir_get(PREFIX):
                    p, (state, beat) = int(key.rsplit("/", 1)[1]), value.split(" ", 2)[:2]
                    if p in self.peers and int(beat) != self.peers[p].beat:
                        self.peers[p].beat, self.peers[p].beat_seen = int(beat), now
                    if state == "fail":
                        failed.add(p)
                if all(p in failed or now - peer.beat_seen > self.heartbeat_timeout for p, peer in self.peers.items()):
                    break
                time.sleep(self.interval)
        except Exception:
            sys.stderr.write(f"meshir: error: {message}\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(EXIT_STATUS)

    def publish(self, client, state: str) -> None:
        self.beat += 1
        client.key_value_set(f"{PREFIX}{self.process_id}",
                             f"{state} {self.beat} {progress.calls} {progress.last_function}", allow_overwrite=True)

    def check(self, entries, now: float) -> None:
        """Update what the peers said; fail if one died or stays behind (module docstring)."""
        for key, value in entries:
            p = int(key.rsplit("/", 1)[1])
            if p not in self.peers:
                continue
            state, beat, calls, *function = value.split(" ", 3)
            peer = self.peers[p]
            if int(beat) != peer.beat:
                peer.beat, peer.beat_seen = int(beat), now
            if int(calls) != peer.calls:
                peer.calls, peer.calls_seen = int(calls), now
            peer.function, peer.exited = (function or [""])[0], state == "exit"
            if state == "fail":
                self.peer_failed(p)
        if progress.calls != self.my_calls:
            self.my_calls, self.my_calls_seen = progress.calls, now
        for p, peer in self.peers.items():
            if not peer.exited and now - peer.beat_seen > self.heartbeat_timeout:
                self.fail(f"process {self.process_id}: process {p} stopped responding: no heartbeat for "
                     f"{now - peer.beat_seen:.0f} s (it died, was killed or is frozen; heartbeat_timeout="
                     f"{self.heartbeat_timeout:g} s); its last call was #{peer.calls} {self._of(peer.function)}")
            waiting = now - self.my_calls_seen > self.timeout and now - peer.calls_seen > self.timeout
            if (peer.exited or waiting) and peer.calls < self.my_calls:
                how = "exited" if peer.exited else f"made no call for {now - peer.calls_seen:.0f} s"
                self.fail(f"process {self.process_id}: process {p} never arrived at call #{self.my_calls} "
                     f"{self._of(progress.last_function)}, which this process waits in: process {p} {how} "
                     f"after call #{peer.calls} {self._of(peer.function)} (timeout={self.timeout:g} s)")

    def peer_failed(self, p: int) -> None:
        """Process `p` failed: end this one too, quoting it (with status 1 if this process is
        exiting after an error of its own, as it would have)."""
        try:
            why = jp.distributed_client().key_value_try_get(f"{FAILED}{p}")
        except Exception:
            why = "(its message is lost)"
        sys.stderr.write(f"meshir: error: process {self.process_id}: ending because process {p} failed: {why}\n")
        sys.stderr.flush()
        sys.stdout.flush()
        try:
            self.publish(jp.distributed_client(), "fail")
        except Exception:
            pass
        os._exit(1 if self.crashed else EXIT_STATUS)

    @staticmethod
    def _of(function: str) -> str:
        return f"(of @{function})" if function else ""

    def stop(self) -> None:
        """At exit: tell the peers, then wait until each has exited too, still checking them.

        jax's own exit waits at a barrier for every process; a peer that died or hangs would
        hold this one there until jax aborts it. So this process leaves only once every
        peer said it exits (or the watchdog names the one that never will)."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        client = jp.distributed_client()
        try:
            self.publish(client, "exit")
            while True:
                entries = client.key_value_dir_get(PREFIX)
                self.check(entries, time.monotonic())
                if all(peer.exited for peer in self.peers.values()):
                    return
                time.sleep(self.interval)
                self.publish(client, "exit")
        except Exception:
            return


def start(process_id: int, num_processes: int, timeout: float, heartbeat_timeout: float) -> Watchdog:
    """Start the watchdog of this process (stopped, with an exit notice, at interpreter exit)."""
    dog = Watchdog(process_id, num_processes, timeout, heartbeat_timeout)
    dog.publish(jp.distributed_client(), "alive")
    dog.start()
    atexit.register(dog.stop)
    previous = sys.excepthook

    def note_crash(*exc_info):
        dog.crashed = True
        previous(*exc_info)

    sys.excepthook = note_crash
    return dog
