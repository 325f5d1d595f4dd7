"""The programs test_distributed.py runs in 2 processes x 4 CPU devices and in one process of
8, and what each process's results are: its addressable shards, keyed by result and index.

Mesh <x=2, y=2, z=2> over 2 processes of 4 devices: x spans the processes, y and z stay
inside one (mi.distributed.describe). Every argument is fed as process-local rows where its
layout splits rows across processes, so no process holds the global batch.
"""
from __future__ import annotations

import numpy as np

import meshir as mi

MESH = {"x": 2, "y": 2, "z": 2}
B, M, F, K = mi.Dim("batch", 16), mi.Dim("d_model", 8), mi.Dim("d_ff", 32), mi.Dim("k", 8)
RULES = {"batch": "x", "d_ff": ("y", "z")}
#: Per process (test_distributed's auto scenario): free communication, then dear communication.
AUTO_COST_MODELS = (mi.CostModel("time", {a: mi.AxisLink(0.0, 1e15) for a in MESH}),
                    mi.CostModel("time", {a: mi.AxisLink(1e-2, 1e6) for a in MESH}))


def data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    x[3, 5], x[12, 1] = np.nan, np.inf  # NaN and inf rows cross the process boundary too
    return {"x": x, "w1": (rng.standard_normal((8, 32)) * 0.2).astype(np.float32),
            "w2": (rng.standard_normal((32, 8)) * 0.2).astype(np.float32),
            "clean": rng.standard_normal((16, 8)).astype(np.float32),
            "kx": rng.standard_normal((8, 8)).astype(np.float32)}


def ffn_program(d_ff: mi.Dim = F) -> mi.Program:
    with mi.Program("ffn", mi.Mesh(MESH)) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, d_ff]), prog.argument("w2", [d_ff, M])
        prog.result(mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, d_ff])), w2, output=[B, M]), name="y")
    return prog


def loss_program(d_ff: mi.Dim = F) -> mi.Program:
    with mi.Program("ffn_loss", mi.Mesh(MESH)) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, d_ff]), prog.argument("w2", [d_ff, M])
        y = mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, d_ff])), w2, output=[B, M])
        prog.result(mi.mean((y - x) * (y - x)), name="loss")
    return prog


def collective_programs() -> dict[str, tuple[mi.Program, dict, str]]:
    """name -> (program of one collective on x[k, d_model], its rules, the StableHLO op it
    must contain), each over x (across processes) and over y (inside one)."""
    out = {}
    for axis, other in (("x", "y"), ("y", "z")):
        where = "across" if axis == "x" else "inside"
        cases = {
            "all_gather": ({"k": axis}, lambda t: mi.all_gather(t, "k", axis), "all_gather"),
            "all_to_all": ({"k": axis}, lambda t: mi.all_to_all(t, "k", "d_model", axis), "all_to_all"),
            "all_slice": (None, lambda t: mi.all_slice(t, "k", axis), None),
            "collective_permute": ({"k": axis}, lambda t: mi.collective_permute(t, {"k": other}), "collective_permute"),
            "all_reduce": ({"k": axis}, lambda t: mi.reduce_sum(t, over=["k"]), "all_reduce"),
            "reduce_scatter": ({"k": axis}, lambda t: mi.reshard(mi.reduce_sum(t, over=["k"]), {"d_model": axis}),
                               "reduce_scatter"),
        }
        for kind, (layout, body, op) in cases.items():
            with mi.Program(f"{kind}_{where}", mi.Mesh(MESH)) as prog:
                t = prog.argument("t", [K, M], layout=layout)
                prog.result(mi.relu(body(t)) * 2.0, name="out")
            out[f"{kind}_{where}"] = (prog, {}, op)
    return out


def collective_reference(name: str, t: np.ndarray) -> np.ndarray:
    if name.startswith(("all_reduce", "reduce_scatter")):
        return np.maximum(t.sum(axis=0), 0) * 2.0
    return np.maximum(t, 0) * 2.0


def shards(result) -> dict[str, np.ndarray]:
    """The addressable shards of a jax.Array, keyed by their global index."""
    return {repr(tuple((s.start, s.stop) for s in shard.index)): np.asarray(shard.data)
            for shard in result.addressable_shards}


def run_all(local) -> dict[str, np.ndarray]:
    """Run every program; `local(array, exe, arg_index, along)` gives what this process
    passes for an argument. Returns {result/index: shard} for this process's shards."""
    d, out = data(), {}
    exe = mi.compile(ffn_program(), layout=RULES)
    y = exe(x=local(d["x"], exe, 0, "batch"), w1=d["w1"], w2=d["w2"])
    out.update({f"ffn/{k}": v for k, v in shards(y).items()})

    step = mi.train_step(loss_program(), mi.Adam(1e-2), params=["w1", "w2"])
    exe = mi.compile(step, layout=RULES, donate=True)
    params, state = {"w1": d["w1"], "w2": d["w2"]}, mi.init_optimizer_state(step)
    losses = []
    for t in range(1, 4):
        res = dict(zip(step.program.result_names, exe(x=local(d["clean"], exe, 0, "batch"), **params, **state,
                                                       step=np.float32(t))))
        losses.append(float(np.asarray(res["loss"])))
        params, state = {k: res[k] for k in params}, {k: res[k] for k in state}
    out["train/losses"] = np.array(losses, np.float32)
    for k, v in {**params, **state}.items():
        out.update({f"train/{k}/{i}": s for i, s in shards(v).items()})

    for name, (prog, rules, _) in collective_programs().items():
        exe = mi.compile(prog, layout=rules)
        res = exe(t=d["kx"])
        out.update({f"{name}/{i}": s for i, s in shards(res).items()})
    return out
