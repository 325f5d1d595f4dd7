"""One process of test_checkpoint_processes.py: `save` or `restore` a sharded checkpoint on a
4x2 mesh, over 2 processes x 4 CPU devices (mi.distributed, started by launch_local) or
1 process x 8 devices.

save: writes the oracle's arrays (global jax.Arrays; under 2 processes none is fully
addressable, so each process writes only its own shards). restore: reads them into another
layout and checks every addressable shard against the oracle. Prints "ok <process id>".
Usage: checkpoint_worker.py save|restore DIR
"""
import os
import sys

import jax

import meshir as mi

action, directory = sys.argv[1], sys.argv[2]
processes = int(os.environ.get("MESHIR_NUM_PROCESSES", "1"))
if processes > 1:
    mi.distributed.initialize(local_devices=8 // processes, timeout=120, heartbeat_timeout=30)
process_id = jax.process_index()

import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

rng = np.random.default_rng(7)
W = rng.standard_normal((16, 8)).astype(np.float32)
W[5, 3], W[9, 1] = np.nan, -np.inf
ORACLE = {"params": {"w": W, "b": rng.standard_normal(8).astype(np.float32)}, "opt": {"count": np.int32(11)}}
assert len(jax.devices()) == 8
if action == "save":
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    specs = {"w": P("x", "y"), "b": P("x"), "count": P()}
else:
    mesh = jax.make_mesh((2, 4), ("a", "b"))
    specs = {"w": P("b", "a"), "b": P(("a", "b")), "count": P()}


def sharding(name):
    return NamedSharding(mesh, specs[name])


if action == "save":
    arrays = {g: {n: jax.make_array_from_callback(v.shape, sharding(n), lambda i, v=v: v[i]) for n, v in group.items()}
              for g, group in ORACLE.items()}
    assert (processes > 1) == (not arrays["params"]["w"].is_fully_addressable)
    with mi.Checkpoints(directory) as ckpt:
        ckpt.save(1, arrays, {"processes": processes})
else:
    targets = {g: {n: jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=sharding(n)) for n, v in group.items()}
               for g, group in ORACLE.items()}
    restored, meta = mi.Checkpoints(directory).restore(targets)
    assert meta["processes"] != processes, meta
    for g, group in ORACLE.items():
        for n, want in group.items():
            got = restored[g][n]
            assert got.sharding == sharding(n)
            assert (processes > 1) == (not got.is_fully_addressable) or n == "count"
            for shard in got.addressable_shards:
                assert np.asarray(shard.data).tobytes() == np.asarray(want[shard.index]).tobytes(), (n, shard.index)
print(f"ok {process_id}", flush=True)
