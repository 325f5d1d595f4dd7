"""Every process compiles the same program: checked at `mi.compile`, never a hang.

In JAX's multi-controller model each process compiles its own executable, and the
collectives of executables that differ (another layout, another program, a branch on the
process id) wait for each other forever or exchange wrong data. So each compile in a
program over processes publishes a digest of every function of the program, of the compile
options and of the lowered StableHLO in the `jax.distributed` key-value store, and waits (at
most `timeout` seconds) for the others': a mismatch is a MeshIRError naming the first
function that differs; a process that never compiles is one naming the process.

A choice a process makes alone (`mi.auto_layout`: a search stopped by its time limit ends at
another node on a slower host) is made the same by `process_zero_value`: every process takes
process 0's.
"""
from __future__ import annotations

import hashlib
import json
import time

from meshir import _jax_private as jp
from meshir.dialect.diagnostics import MeshIRError

from . import setup

_compiles = 0
_choices = 0


def digests(module, options: str, lowered: str) -> dict[str, str]:
    """Digest per function of `module` (in order), then of the options and the lowering."""
    out = {}
    for op in module.body.operations:
        if op.operation.name == "func.func":
            out["@" + op.attributes["sym_name"].value] = _digest(str(op))
    out["the compile options"] = _digest(options)
    out["the lowered StableHLO"] = _digest(lowered)
    return out


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_same_program(module, options, lowered) -> None:
    """MeshIRError unless every process compiles this same program as its next compile.
    (`options()`, the compile options' text, and `lowered`, the StableHLO module, are
    printed only in a program over processes.)"""
    global _compiles
    config = setup.current
    if config is None or config.num_processes < 2:
        return
    _compiles += 1
    prefix = f"meshir/compile/{_compiles}/"
    mine = digests(module, options(), str(lowered))
    client = jp.distributed_client()
    client.key_value_set(f"{prefix}{config.process_id}", json.dumps(mine))
    theirs = _gather(client, prefix, config)
    for p in sorted(theirs):
        if theirs[p] != mine:
            first = next((k for k in mine if theirs[p].get(k) != mine[k]), None) or next(iter(theirs[p]))
            only = "" if first in mine and first in theirs[p] else " (a function only one of them has)"
            raise MeshIRError(
                f"mi.compile #{_compiles}: process {config.process_id} and process {p} compile different "
                f"programs: {first} {'differ' if first.endswith('options') else 'differs'}{only}. Every process must compile the same program with the "
                f"same options, in the same order (a layout, shape or branch that depends on the process "
                f"id or on local data makes them differ)")


def _gather(client, prefix: str, config) -> dict[int, dict]:
    """Every other process's digests of this compile, waiting at most `config.timeout`."""
    found = _wait(client, prefix, config, lambda found: len(found) == config.num_processes)
    if found is None:
        found = {int(k.rsplit("/", 1)[1]) for k, _ in client.key_value_dir_get(prefix)}
        missing = sorted(set(range(config.num_processes)) - found)
        raise MeshIRError(
            f"mi.compile #{_compiles}: process {config.process_id} waited {config.timeout:g} s for "
            f"process{'es' if len(missing) > 1 else ''} {', '.join(map(str, missing))} to compile the same "
            f"program; they never did (they compiled fewer programs, failed, or hang) "
            f"(mi.distributed.initialize(timeout=...))")
    found.pop(config.process_id)
    return {p: json.loads(v) for p, v in found.items()}


def _wait(client, prefix: str, config, done) -> dict[int, str] | None:
    """{process: value} under `prefix` once `done` of it, or None after `config.timeout`."""
    deadline, pause = time.monotonic() + config.timeout, 0.005
    while True:
        found = {int(k.rsplit("/", 1)[1]): v for k, v in client.key_value_dir_get(prefix)}
        if done(found):
            return found
        if time.monotonic() > deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def process_zero_value(what: str, mine: str) -> str:
    """Process 0's `mine` for this choice (the n-th call in every process), or `mine` itself
    outside a program over processes. `what` names the choice in the timeout's error."""
    global _choices
    config = setup.current
    if config is None or config.num_processes < 2:
        return mine
    _choices += 1
    prefix = f"meshir/choice/{_choices}/"
    client = jp.distributed_client()
    if config.process_id == 0:
        client.key_value_set(prefix + "0", mine)
        return mine
    found = _wait(client, prefix, config, lambda found: 0 in found)
    if found is None:
        raise MeshIRError(
            f"{what} #{_choices}: process {config.process_id} waited {config.timeout:g} s for process 0's "
            f"choice; it never made it (it made fewer choices, failed, or hangs) "
            f"(mi.distributed.initialize(timeout=...))")
    return found[0]
