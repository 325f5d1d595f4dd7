"""One program over 2 processes x 4 CPU devices (jax.distributed, gloo) on localhost, started
with mi.distributed.launch_local: the results equal one process's on 8 devices shard by shard,
every collective kind works across the process boundary and inside one process, and every
fault ends every process non-zero within bounded time, naming the process at fault.
"""
import socket
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import meshir as mi
from meshir.api.compilation.auto_layout import format_rules

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import distributed_programs as dp

WORKER = str(Path(__file__).resolve().parents[1] / "support" / "distributed_worker.py")
FAST = {"WORKER_TIMEOUT": "6", "WORKER_HEARTBEAT": "3"}


def launch(scenario: str, tmp_path, env=None, timeout=180, port=None):
    start = time.monotonic()
    results = mi.distributed.launch_local([sys.executable, WORKER, scenario, str(tmp_path)], 2, capture=True,
                                          timeout=timeout, env={"PYTHONPATH": str(Path(WORKER).parent), **(env or {})},
                                          port=port)
    return results, time.monotonic() - start


def show(results) -> str:
    return "\n".join(f"--- process {r.process_id} (exit {r.returncode}):\n{r.output[-3000:]}" for r in results)


def test_two_processes_equal_one_process_shard_by_shard(tmp_path):
    results, _ = launch("programs", tmp_path)
    assert all(r.returncode == 0 for r in results), show(results)
    want = dp.run_all(lambda a, exe, i, along: a)  # this process: the 8 devices in one process
    got = {}
    for p in range(2):
        with np.load(tmp_path / f"p{p}.npz") as f:
            for key in f.files:
                if key in got:  # a shard both processes hold (replicated): equal
                    np.testing.assert_array_equal(got[key], f[key], err_msg=key)
                got[key] = f[key]
    assert set(got) == set(want)
    for key in sorted(want):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)
    assert any(np.isnan(v).any() for k, v in got.items() if k.startswith("ffn/"))  # NaN crossed as NaN
    d = dp.data()
    for name in dp.collective_programs():
        for key in (k for k in got if k.startswith(name + "/")):
            index = tuple(slice(a, b) for a, b in eval(key.split("/", 1)[1]))
            np.testing.assert_allclose(got[key], dp.collective_reference(name, d["kx"])[index], rtol=1e-6)


def test_collectives_cross_the_process_boundary_or_stay_inside():
    """What the test above runs: x spans both processes, y and z do not, and each program
    holds its collective (the StableHLO op)."""
    exe_kinds = {}
    for name, (prog, rules, op) in dp.collective_programs().items():
        text = mi.compile(prog, layout=rules).stablehlo_text()
        exe_kinds[name] = op is None or f"stablehlo.{op}" in text
    assert all(exe_kinds.values()), exe_kinds
    assert {n.rsplit("_", 1)[0] for n in exe_kinds} == {"all_gather", "all_to_all", "all_slice", "collective_permute",
                                                        "all_reduce", "reduce_scatter"}


def test_auto_layout_takes_process_zeros_choice_when_the_searches_differ(tmp_path):
    """mi.auto_layout over processes: each process's own search chose other rules (another
    cost model here; a time limit on hosts of other speeds in practice), every process
    compiles process 0's, and the step's loss equals the interpreter's."""
    results, _ = launch("auto", tmp_path)
    assert all(r.returncode == 0 for r in results), show(results)
    step = mi.train_step(dp.loss_program(), mi.Adam(1e-2), params=["w1", "w2"])
    zero, one = (mi.auto_layout(step, cost_model=m, measure=3) for m in dp.AUTO_COST_MODELS)
    assert zero.rules != one.rules
    lines = [next(line for line in r.output.splitlines() if line.startswith("chosen ")) for r in results]
    assert lines[0] == f"chosen {zero.rules} own None loss {lines[0].rsplit(' ', 1)[1]}", show(results)
    assert lines[1].startswith(f"chosen {zero.rules} own {format_rules(one.rules)} loss"), show(results)
    d = dp.data()
    want = mi.interpret(step, x=d["clean"], w1=d["w1"], w2=d["w2"], **mi.init_optimizer_state(step),
                        step=np.float32(1))[0]
    for line in lines:
        np.testing.assert_allclose(float(line.rsplit(" ", 1)[1]), float(want), rtol=1e-5)


@pytest.mark.parametrize("scenario, culprit, says", [
    ("die", 1, r"process 1 stopped responding: no heartbeat"),
    ("hang", 1, r"process 1 never arrived at call #2 \(of @ffn_loss\)"),
    ("late", 1, r"process 1 never connected to this coordinator"),
    ("mismatch", None, r"process [01] and process [01] compile different programs: @ffn_loss differs"),
    ("count", None, r"has 8 devices, but the 2 processes have 16 \(8 each\).*local_devices=4"),
    ("shape", 1, r"argument 'x' of @ffn_loss: process 1's part of global shape \[batch=16, d_model=8\] is \(8, 8\), "
                 r"got \(16, 8\)"),
])
def test_a_fault_ends_every_process_naming_the_culprit(tmp_path, scenario, culprit, says):
    results, seconds = launch(scenario, tmp_path, FAST, timeout=90)
    assert seconds < 60, show(results)
    survivors = [r for r in results if r.process_id != culprit]
    assert all(r.returncode != 0 for r in survivors), show(results)
    import re
    assert any(re.search(says, r.output) for r in results), show(results)
    for r in results:  # the watchdog or a MeshIRError ended it, not a C++ abort
        assert "Check failure stack trace" not in r.output, show(results)


def test_a_port_in_use_is_named(tmp_path):
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        port = busy.getsockname()[1]
        results, seconds = launch("programs", tmp_path, FAST, timeout=90, port=port)
    assert all(r.returncode != 0 for r in results) and seconds < 60, show(results)
    assert f"the coordinator port {port}" in results[0].output and "already in use" in results[0].output, show(results)
