"""One process of test_distributed.py, started by mi.distributed.launch_local (2 x 4 CPU devices).

    distributed_worker.py SCENARIO OUT_DIR

`programs` runs distributed_programs.run_all with process-local rows and saves this
process's shards to OUT_DIR/p<id>.npz. The other scenarios are faults: each makes one
process misbehave (die, hang, arrive late, compile another program, feed a wrong shape...)
and the test checks how the others end.
"""
import os
import sys
import time

import meshir as mi

scenario, out_dir = sys.argv[1], sys.argv[2]
me = int(os.environ["MESHIR_PROCESS_ID"])
if scenario == "late" and me == 1:
    time.sleep(120)
local_devices = 8 if scenario == "count" else 4
mi.distributed.initialize(local_devices=local_devices, timeout=float(os.environ.get("WORKER_TIMEOUT", 60)),
                          heartbeat_timeout=float(os.environ.get("WORKER_HEARTBEAT", 10)))

import numpy as np  # noqa: E402

import distributed_programs as dp  # noqa: E402


def my_part(array: np.ndarray, exe, arg_index: int, along: str):
    """This process's rows of `array` for argument `arg_index`."""
    return mi.process_local(array[mi.distributed.local_slices(exe, exe.signature.arg_names[arg_index])], along=along)


if scenario == "programs":
    mesh = mi.Mesh(dp.MESH)
    assert mi.distributed.processes_along_axes(mesh) == {"x": 2, "y": 1, "z": 1}, mi.distributed.describe(mesh)
    out = dp.run_all(my_part)
    np.savez(os.path.join(out_dir, f"p{me}.npz"), **out)
    print(f"ok {me}", flush=True)
    sys.exit(0)

if scenario == "auto":
    # the processes price communication differently, so their own searches choose different
    # rules; both must compile process 0's (else: a same-program error, or a hang)
    step = mi.train_step(dp.loss_program(), mi.Adam(1e-2), params=["w1", "w2"])
    choice = mi.auto_layout(step, cost_model=dp.AUTO_COST_MODELS[me])
    exe = mi.compile(step, layout=choice.rules)
    d = dp.data()
    x = my_part(d["clean"], exe, 0, "batch") if "batch" in choice.rules else d["clean"]  # rows, or all of it
    res = exe(x=x, w1=d["w1"], w2=d["w2"], **mi.init_optimizer_state(step),
              step=np.float32(1))
    print(f"chosen {choice.rules} own {choice.own_choice} loss {float(np.asarray(res[0])):.6f}", flush=True)
    sys.exit(0)

d = dp.data()
d_ff = mi.Dim("d_ff", 64) if scenario == "mismatch" and me == 1 else dp.F
if scenario == "mismatch" and me == 1:
    d["w1"], d["w2"] = np.zeros((8, 64), np.float32), np.zeros((64, 8), np.float32)
# the loss's mean over the batch sums across the processes: each call waits for both
exe = mi.compile(dp.loss_program(d_ff), layout=dp.RULES)
x = my_part(d["x"], exe, 0, "batch")
if scenario == "shape" and me == 1:
    x = mi.process_local(d["x"], along="batch")  # the whole batch instead of its rows
exe(x=x, w1=d["w1"], w2=d["w2"]).block_until_ready()
if scenario == "die" and me == 1:
    os._exit(3)  # killed: no exit notice
if scenario == "hang" and me == 1:
    time.sleep(120)  # alive (heartbeats go on) but never makes the next call
for _ in range(3):
    exe(x=x, w1=d["w1"], w2=d["w2"]).block_until_ready()
print(f"ok {me}", flush=True)
