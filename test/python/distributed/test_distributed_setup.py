"""mi.distributed in one process: bad arguments are located MeshIRErrors before jax starts
anything, and the watchdog's rules (who is dead, who is behind) on a scripted key-value store."""
import os
import subprocess
import sys

import pytest

import meshir as mi
from meshir.distributed import progress
from meshir.distributed.watchdog import Watchdog


@pytest.mark.parametrize("kwargs, error, says", [
    ({"num_processes": "2"}, mi.MeshIRTypeError, r"num_processes must be an int, got '2' \(str\)"),
    ({"num_processes": 2, "process_id": 2}, mi.MeshIRValueError, r"process_id=2 is not one of the 2 processes 0\.\.1"),
    ({"process_id": -1}, mi.MeshIRValueError, r"process_id=-1 is negative"),
    ({"num_processes": 0}, mi.MeshIRValueError, r"num_processes=0: a program has at least one process"),
    ({"timeout": 0}, mi.MeshIRValueError, r"timeout must be a positive number of seconds, got 0"),
    ({"heartbeat_timeout": "1"}, mi.MeshIRValueError, r"heartbeat_timeout must be a positive number of seconds"),
    ({"local_devices": True}, mi.MeshIRTypeError, r"local_devices must be an int, got True"),
])
def test_bad_arguments_are_errors_at_the_users_line(kwargs, error, says):
    with pytest.raises(error, match=says) as info:
        mi.distributed.initialize("localhost:1", **kwargs)
    assert str(info.value).startswith(f"{__file__}:")


def test_environment_values_are_checked_and_named(monkeypatch):
    monkeypatch.setenv("MESHIR_PROCESS_ID", "one")
    with pytest.raises(mi.MeshIRValueError, match=r"\$MESHIR_PROCESS_ID='one' is not an integer"):
        mi.distributed.initialize("localhost:1", 2)


def test_after_jax_started_it_says_to_call_it_first():
    import jax

    jax.devices()  # this test process's backend runs
    with pytest.raises(mi.MeshIRError, match=r"jax's backend already started .* call mi.distributed.initialize first"):
        mi.distributed.initialize("localhost:1", 1, 0)


def test_a_users_own_cpu_device_count_wins_over_local_devices():
    code = ("import jax, meshir as mi; jax.config.update('jax_num_cpu_devices', 2)\n"
            "try:\n    mi.distributed.initialize('localhost:1', 1, 0, local_devices=4)\n"
            "except mi.MeshIRError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"}).stdout
    assert "local_devices=4, but this process configured jax_num_cpu_devices=2 itself" in out, out


def test_launch_local_refuses_a_bad_process_count():
    with pytest.raises(mi.MeshIRValueError, match=r"processes must be a positive int, got 0"):
        mi.distributed.launch_local([sys.executable, "-c", "pass"], 0)


def test_process_local_along_names_dims():
    with pytest.raises(mi.MeshIRTypeError, match=r"mi.process_local\(along=...\): dim names"):
        mi.process_local([1.0], along=3)
    rows = mi.Dim("rows", 4)
    with mi.Program("p", mi.Mesh({"x": 2})) as prog:
        prog.result(prog.argument("a", [rows]) * 2.0, name="b")
    exe = mi.compile(prog, layout={"rows": "x"})
    with pytest.raises(mi.MeshIRError, match=r"mi.process_local\(along='batch'\): .* has no dim 'batch'"):
        exe(a=mi.process_local([1.0, 2.0, 3.0, 4.0], along="batch"))
    assert mi.distributed.local_slices(exe, "a") == (slice(0, 4),)  # one process holds every row
    with pytest.raises(mi.MeshIRKeyError, match=r"'b' is not an argument of @p \(a\)"):
        mi.distributed.local_slices(exe, "b")


class Failed(Exception):
    pass


@pytest.fixture
def dog(monkeypatch):
    """Process 0 of 3 (timeout 10 s, heartbeat 4 s) whose failures raise instead of exiting."""
    w = Watchdog(0, 3, timeout=10.0, heartbeat_timeout=4.0)

    def fail(message):
        raise Failed(message)

    monkeypatch.setattr(w, "fail", fail)
    monkeypatch.setattr(w, "peer_failed", lambda p: fail(f"peer {p} failed"))
    return w


def beats(*rows):
    return [(f"meshir/alive/{p}", f"{state} {beat} {calls} step") for p, state, beat, calls in rows]


def test_watchdog_names_a_peer_whose_heartbeat_stops(dog):
    dog.check(beats((1, "alive", 1, 0), (2, "alive", 1, 0)), now=100.0)
    dog.check(beats((1, "alive", 2, 0), (2, "alive", 1, 0)), now=103.0)
    with pytest.raises(Failed, match=r"process 2 stopped responding: no heartbeat for 5 s"):
        dog.check(beats((1, "alive", 3, 0), (2, "alive", 1, 0)), now=105.0)


def test_watchdog_names_a_peer_that_stays_behind_only_after_the_timeout(dog, monkeypatch):
    monkeypatch.setattr(progress, "calls", progress.calls + 5)
    dog.check(beats((1, "alive", 1, 0), (2, "alive", 1, 0)), now=100.0)
    for t in range(1, 11):  # every peer alive; process 2 stays 1 call behind, process 1 catches up
        peers = beats((1, "alive", 1 + t, 5 if t > 2 else 0), (2, "alive", 1 + t, 4))
        dog.check(peers, now=100.0 + t)
    with pytest.raises(Failed, match=r"process 2 never arrived at call #\d+ .*made no call for 1[01] s"):
        dog.check(beats((1, "alive", 13, 5), (2, "alive", 13, 4)), now=111.5)


def test_watchdog_accepts_exited_peers_level_with_it_and_names_one_that_left_early(dog, monkeypatch):
    monkeypatch.setattr(progress, "calls", 7)
    dog.check(beats((1, "exit", 1, 7), (2, "alive", 1, 7)), now=100.0)
    dog.check(beats((1, "exit", 1, 7), (2, "alive", 2, 7)), now=150.0)  # no heartbeat needed from exited peers
    with pytest.raises(Failed, match=r"process 2 never arrived at call #7 .*process 2 exited after call #6"):
        dog.check(beats((1, "exit", 1, 7), (2, "exit", 3, 6)), now=151.0)


def test_watchdog_ends_with_a_failed_peer(dog):
    with pytest.raises(Failed, match="peer 1 failed"):
        dog.check(beats((1, "fail", 1, 0)), now=100.0)
