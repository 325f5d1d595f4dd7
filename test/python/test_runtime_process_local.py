"""`mi.process_local` across two processes (jax.distributed, gloo): each passes only its own
rows, the step's sum crosses processes, results match NumPy shard by shard (process_local_worker.py)."""
import os
import socket
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).with_name("process_local_worker.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_two_processes_pass_their_own_rows():
    port = str(free_port())
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    workers = [subprocess.Popen([sys.executable, str(WORKER), str(i), port], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env) for i in range(2)]
    try:
        outputs = [w.communicate(timeout=240)[0] for w in workers]
    finally:
        for w in workers:
            w.kill()
    for i, (w, out) in enumerate(zip(workers, outputs)):
        assert w.returncode == 0 and f"ok {i}" in out, f"process {i} (exit {w.returncode}):\n{out[-3000:]}"
