"""A checkpoint saved by 2 processes (each writing only its shards) restores in 1 process on
8 devices in another layout, and one saved by 1 process restores in 2 (each checking its
addressable shards): mi.distributed.launch_local on localhost, checkpoint_worker.py."""
import sys
from pathlib import Path

import pytest

import meshir as mi

WORKER = Path(__file__).resolve().parents[1] / "support" / "checkpoint_worker.py"


def run(action, directory, processes):
    results = mi.distributed.launch_local([sys.executable, str(WORKER), action, str(directory)], processes,
                                          capture=True, timeout=240)
    for r in results:
        assert r.returncode == 0 and f"ok {r.process_id}" in r.output, (
            f"{action} process {r.process_id} of {processes} (exit {r.returncode}):\n{r.output[-3000:]}")


@pytest.mark.parametrize("saved_by, restored_by", [(2, 1), (1, 2)])
def test_checkpoint_moves_between_process_counts(tmp_path, saved_by, restored_by):
    run("save", tmp_path, saved_by)
    if saved_by > 1:  # each process wrote its own shards
        assert sorted(p.name for p in (tmp_path / "1" / "state").glob("ocdbt.process_*")) == [
            "ocdbt.process_0", "ocdbt.process_1"]
    run("restore", tmp_path, restored_by)
