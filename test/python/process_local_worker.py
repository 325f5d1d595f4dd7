"""One process of test_runtime_process_local.py: 2 processes x 4 CPU devices form one 4x2 mesh.

Each process passes only its rows of `x` and `w` (mi.process_local), runs a step that sums
over the rows (split over x, so the sum crosses processes), feeds the result back once (the
fast path with arrays that are not fully addressable), and checks its own shards against
NumPy. Prints "ok <process id>" on success.
"""
import sys

import jax

import meshir as mi  # before the config: MeshIR's import asks for 8 CPU devices, this run wants 4

process_id, port = int(sys.argv[1]), sys.argv[2]
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.config.update("jax_num_cpu_devices", 4)
jax.distributed.initialize(coordinator_address=f"localhost:{port}", num_processes=2, process_id=process_id)

import numpy as np  # noqa: E402

from meshir.lowering.runtime.process_local import local_shape  # noqa: E402

rows, cols = mi.Dim("rows", 16), mi.Dim("cols", 8)
with mi.Program("step", mi.Mesh({"x": 4, "y": 2})) as prog:
    x = prog.argument("x", [rows, cols])
    w = prog.argument("w", [rows, cols])
    total = prog.argument("total", [cols])
    prog.result(total + mi.reduce_sum(x * w, over=[rows]), name="total")
exe = mi.compile(prog, layout={"rows": "x", "cols": "y"}, donate=True)

rng = np.random.default_rng(0)
X, W = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)
X[3, 5] = np.nan
split = exe.in_shardings[0]
assert local_shape(split, (16, 8)) == (8, 8), local_shape(split, (16, 8))
first = min(index[0].start or 0 for index in split.addressable_devices_indices_map((16, 8)).values())
mine = slice(first, first + 8)
total = exe(x=mi.process_local(X[mine]), w=mi.process_local(W[mine]), total=mi.process_local(np.zeros(8, np.float32)))
total = exe(x=mi.process_local(X[mine]), w=mi.process_local(W[mine]), total=total)
want = 2 * (X * W).sum(axis=0)
assert not total.is_fully_addressable
for shard in total.addressable_shards:
    np.testing.assert_allclose(np.asarray(shard.data), want[shard.index], rtol=1e-5)
try:
    exe(x=mi.process_local(X), w=mi.process_local(W[mine]), total=total)
except mi.MeshIRError as e:
    assert "this process's part of global shape [rows=16, cols=8] is (8, 8), got (16, 8)" in str(e), e
else:
    raise AssertionError("a whole array passed as one process's part was accepted")
print(f"ok {process_id}", flush=True)
