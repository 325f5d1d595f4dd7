"""A checkpoint saved by 2 processes (each writing only its shards) restores in 1 process on
8 devices in another layout, and one saved by 1 process restores in 2 (each checking its
addressable shards): jax.distributed on localhost with gloo, checkpoint_worker.py."""
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("checkpoint_worker.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def run(action, directory, processes):
    port = str(free_port())
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    workers = [subprocess.Popen([sys.executable, str(WORKER), action, str(directory), str(processes), str(i), port],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
               for i in range(processes)]
    try:
        outputs = [w.communicate(timeout=240)[0] for w in workers]
    finally:
        for w in workers:
            w.kill()
    for i, (w, out) in enumerate(zip(workers, outputs)):
        assert w.returncode == 0 and f"ok {i}" in out, (
            f"{action} process {i} of {processes} (exit {w.returncode}):\n{out[-3000:]}")


@pytest.mark.parametrize("saved_by, restored_by", [(2, 1), (1, 2)])
def test_checkpoint_moves_between_process_counts(tmp_path, saved_by, restored_by):
    run("save", tmp_path, saved_by)
    if saved_by > 1:  # each process wrote its own shards
        assert sorted(p.name for p in (tmp_path / "1" / "state").glob("ocdbt.process_*")) == [
            "ocdbt.process_0", "ocdbt.process_1"]
    run("restore", tmp_path, restored_by)
