"""Microbatching (`mi.train_step(..., microbatches={"batch": k})`, api/training/_microbatch.py): one
update equal to the full batch's, from a scan whose compiled size does not grow with k, with
less temporary memory as k grows; bad input is a located error."""
from __future__ import annotations

import numpy as np
import pytest

import meshir as mi

MESH = mi.Mesh({"x": 4, "y": 2})


def _loss(batch=16, d=8, f=16, reduce="mean"):
    B, D, F = mi.Dim("batch", batch), mi.Dim("d", d), mi.Dim("f", f)
    with mi.Program("loss", MESH) as prog:
        x = prog.argument("x", [B, D])
        y = prog.argument("y", [B, F])
        w = prog.argument("w", [D, F])
        b = prog.argument("b", [F])
        h = mi.tanh(mi.einsum(x, w, output=[B, F]) + b)
        err = (h - y) ** 2
        prog.result(mi.mean(err) if reduce == "mean" else mi.reduce_sum(err), name="loss")
    return prog


def _data(batch=16, d=8, f=16, seed=0):
    rng = np.random.default_rng(seed)
    return dict(x=rng.standard_normal((batch, d)).astype(np.float32), y=rng.standard_normal((batch, f)).astype(np.float32),
                w=(rng.standard_normal((d, f)) / np.sqrt(d)).astype(np.float32), b=np.zeros(f, np.float32))


def _step(prog, optimizer, k, layout):
    step = mi.train_step(prog, optimizer, params=["w", "b"], microbatches={"batch": k} if k else None)
    return step, mi.compile(step, layout=layout)


def _run(step, exe, data):
    state = mi.init_optimizer_state(step)
    return dict(zip(step.program.result_names, exe(**data, **state, step=np.float32(1))))


@pytest.mark.parametrize("reduce", ["mean", "sum"])
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("layout", [{"batch": "x", "f": "y"}, {"f": ("x", "y")}], ids=["batch:x,f:y", "f:(x,y)"])
def test_the_update_equals_the_full_batch(layout, k, reduce):
    prog, data = _loss(reduce=reduce), _data()
    full = _run(*_step(prog, mi.Adam(0.01), None, layout), data)
    micro = _run(*_step(prog, mi.Adam(0.01), k, layout), data)
    assert set(full) == set(micro)
    for name in full:
        np.testing.assert_allclose(np.asarray(micro[name]), np.asarray(full[name]), rtol=2e-5, atol=2e-6)


def test_the_compiled_step_does_not_grow_with_k_and_its_temp_memory_falls():
    prog, layout = _loss(batch=64, d=32, f=512), {"f": "y"}
    sizes, temps = {}, {}
    for k in (1, 2, 8):
        _, exe = _step(prog, mi.SGD(0.1), k if k > 1 else None, layout)
        sizes[k], temps[k] = len(exe.compiled_hlo_text()), exe.memory_analysis().temp_size_in_bytes
    assert sizes[8] < 1.1 * sizes[2], sizes  # one scan, not k unrolled copies
    assert temps[8] < temps[2] < temps[1], temps


def test_bad_microbatches_are_located_errors():
    prog = _loss()
    cases = [({"batch": 3}, r"'batch' of size 16 \(argument 'x'\) does not split into 3 equal microbatches"),
             ({"seq": 2}, r"no argument of @loss has dim 'seq'"),
             ({"d": 2}, r"parameter 'w' has dim 'd'"),
             ({"batch": 0}, r"must be a positive int, got 0"),
             ({"batch": 2, "f": 2}, r"must be \{dim: count\} for one named dim")]
    for microbatches, match in cases:
        with pytest.raises(mi.MeshIRError, match=r"test_microbatch.py:\d+:\d+: error: microbatches.*" + match
                           if "dim: count" not in match else match):
            mi.train_step(prog, mi.SGD(0.1), params=["w", "b"], microbatches=microbatches)
