"""Runtime seeds: random ops and dropout take a 0-d int32 Tensor seed, so a compiled step draws
new values on every call while one seed stays layout-independent; `mi.train_step` derives
each step's seed from a base seed and the step (so a resumed run continues the sequence)."""
import numpy as np
import pytest

import meshir as mi
from meshir.dialect.signature import entry_function, signature

MESH = mi.Mesh({"x": 4, "y": 2})
BATCH, D = mi.Dim("batch", 64), mi.Dim("d", 32)
LAYOUTS = [{}, {"batch": "x", "d": "y"}, {"batch": ("x", "y")}]
RATE = 0.25


def dropout_loss(in_a_loop: bool = False):
    """loss = mean((dropout(x * w))²); with `in_a_loop`, two dropouts in a fori_loop, each
    seeded by fold_in(seed, i)."""
    with mi.Program("loss", MESH) as prog:
        x, w = prog.argument("x", [BATCH, D]), prog.argument("w", [D])
        seed = prog.argument("seed", [], "i32")
        if in_a_loop:
            h = mi.fori_loop(2, lambda i, h: mi.dropout(h, RATE, mi.fold_in(seed, i)), x * w)
        else:
            h = mi.dropout(x * w, RATE, seed)
        prog.result(mi.mean(h * h), name="loss")
    return prog


def inputs(rng):
    return {"x": rng.normal(size=(BATCH.size, D.size)).astype(np.float32)}


def run(exe, step, params, data, seed, t):
    out = dict(zip(step.program.result_names, exe(**data, **params, seed=np.int32(seed), step=np.float32(t))))
    return out, {k: out[k] for k in params}


def test_the_step_keeps_the_seed_argument_and_no_other_change():
    step = mi.train_step(dropout_loss(), mi.SGD(0.1), params=["w"])
    sig = signature(entry_function(step.module))
    assert sig.arg_names == ("x", "w", "seed", "step")  # the base seed stays an argument
    assert step.program.result_names == ("loss", "w")


@pytest.mark.parametrize("in_a_loop", [False, True], ids=["dropout", "dropout_in_a_loop"])
def test_each_step_draws_anew_and_one_seed_gives_one_result_on_every_layout(in_a_loop):
    step = mi.train_step(dropout_loss(in_a_loop), mi.SGD(0.1), params=["w"])
    data = inputs(np.random.default_rng(0))
    params = {"w": np.ones(D.size, np.float32)}
    by_layout = []
    for layout in LAYOUTS:
        exe = mi.compile(step, layout=layout)
        losses = [float(run(exe, step, params, data, 5, t)[0]["loss"]) for t in (1, 2, 3)]
        again = float(run(exe, step, params, data, 5, 2)[0]["loss"])
        other_seed = float(run(exe, step, params, data, 6, 2)[0]["loss"])
        assert len(set(losses)) == 3, f"consecutive steps drew the same mask: {losses}"
        assert again == losses[1] and other_seed != losses[1]
        by_layout.append((losses, run(exe, step, params, data, 5, 3)[1]["w"]))
    reference = mi.interpret(step.program, **data, **params, seed=np.int32(5), step=np.float32(3))
    for losses, w in by_layout:
        np.testing.assert_allclose(losses, by_layout[0][0], rtol=2e-6)
        np.testing.assert_allclose(np.asarray(w), np.asarray(reference[1]), rtol=2e-6, atol=1e-7)


def test_the_drop_rate_is_the_rate_statistically():
    n = 4096 * 16
    with mi.Program("mask", MESH) as prog:
        seed = prog.argument("seed", [], "i32")
        prog.result(mi.dropout(mi.constant(1.0, [mi.Dim("n", n)]), RATE, seed), name="kept")
    exe = mi.compile(prog, layout={"n": ("x", "y")})
    masks = [np.asarray(exe(seed=mi_seed)) for mi_seed in (np.int32(s) for s in (0, 1, -7, 2**31 - 1))]
    sigma = np.sqrt(RATE * (1 - RATE) / n)
    for mask in masks:
        assert set(np.unique(mask)) <= {0.0, np.float32(1 / (1 - RATE))}
        assert abs(np.mean(mask == 0) - RATE) < 5 * sigma
    # Different seeds give unrelated masks: agreement near rate² + (1-rate)².
    agree = np.mean((masks[0] == 0) == (masks[1] == 0))
    assert abs(agree - (RATE**2 + (1 - RATE) ** 2)) < 5 * np.sqrt(0.5 / n)


def test_a_resumed_run_draws_the_uninterrupted_runs_masks(tmp_path):
    step = mi.train_step(dropout_loss(), mi.Adam(1e-2), params=["w"])
    exe = mi.compile(step, layout={"batch": "x", "d": "y"})
    data = inputs(np.random.default_rng(1))
    state = {"w": np.ones(D.size, np.float32), **mi.init_optimizer_state(step)}

    def advance(state, steps):
        for t in steps:
            out = dict(zip(step.program.result_names, exe(**data, **state, seed=np.int32(11), step=np.float32(t))))
            state = {k: out[k] for k in state}
        return state

    straight = advance(state, range(1, 5))
    checkpoints = mi.Checkpoints(tmp_path / "ckpt")
    checkpoints.save(2, {"state": advance(state, range(1, 3))})
    restored, _ = checkpoints.restore()
    resumed = advance({k: np.asarray(v) for k, v in restored["state"].items()}, range(3, 5))
    for k in straight:
        np.testing.assert_array_equal(np.asarray(resumed[k]), np.asarray(straight[k]), err_msg=k)


def test_microbatches_draw_a_different_mask_per_slice():
    k = 4
    step = mi.train_step(dropout_loss(), mi.SGD(0.1), params=["w"], microbatches={"batch": k})
    data = {"x": np.ones((BATCH.size, D.size), np.float32), "w": np.ones(D.size, np.float32)}
    text = str(step.program.module)
    assert text.count("mtf.random_uniform") == 1
    out = mi.interpret(step.program, **data, seed=np.int32(3), step=np.float32(1))
    exe = mi.compile(step, layout={"batch": "x"})
    got = exe(**data, seed=np.int32(3), step=np.float32(1))
    np.testing.assert_allclose(float(got[0]), float(out[0]), rtol=1e-6)
    # The step's loss is the slices' mean of mean(mask_i²), each mask drawn with
    # fold_in(step_seed, i): rebuilt here from the masks themselves.
    with mi.Program("masks", MESH) as prog:
        seed = prog.argument("seed", [], "i32")
        step_seed = mi.fold_in(seed, 0)
        rows = mi.Dim("batch", BATCH.size // k)
        for i in range(k):
            prog.result(mi.dropout(mi.constant(1.0, [rows, D]), RATE, mi.fold_in(step_seed, i)), name=f"m{i}")
    masks = mi.interpret(prog, seed=np.int32(3))
    assert len({m.tobytes() for m in masks}) == k
    per_slice = [float(np.mean(m.astype(np.float64) ** 2)) for m in masks]
    np.testing.assert_allclose(float(got[0]), np.mean(per_slice), rtol=1e-5)
    assert len(set(per_slice)) > 1  # one mask for every slice would give the first slice's loss


def test_a_loss_without_randomness_keeps_its_arguments():
    with mi.Program("loss", MESH) as prog:
        w, seed_like = prog.argument("w", [D]), prog.argument("count", [], "i32")
        prog.result(mi.reduce_sum(w * mi.cast(seed_like, "f32")), name="loss")
    step = mi.train_step(prog, mi.SGD(0.1), params=["w"])
    assert "fold_in" not in str(step.program.module) and "-1640531535" not in str(step.program.module)


@pytest.mark.parametrize("build, error, message", [
    (lambda p: mi.dropout(p["x"], 0.5, p["f"]), mi.MeshIRTypeError,
     r"the seed of mi.dropout must be an int or a 0-d int32 Tensor, got a Tensor of type !mtf.tensor<f32>"),
    (lambda p: mi.random_uniform([D], p["v"]), mi.MeshIRTypeError,
     r"the seed of mi.random_uniform must be an int or a 0-d int32 Tensor, got a Tensor of type !mtf.tensor<d=32, i32>"),
    (lambda p: mi.random_normal([D], 1.5), mi.MeshIRTypeError,
     r"the seed of mi.random_normal must be an int or a 0-d int32 Tensor, got float 1.5"),
    (lambda p: mi.random_normal([D], "7"), mi.MeshIRTypeError, r"got str '7'"),
    (lambda p: mi.fold_in(p["s"], 2.0), mi.MeshIRTypeError, r"the data of mi.fold_in must be an integer, got float 2.0"),
    (lambda p: mi.fold_in(p["f"], 1), mi.MeshIRTypeError, r"the seed of mi.fold_in must be an int or a 0-d int32"),
    (lambda p: mi.fold_in(3, 4), mi.MeshIRTypeError, r"mi.fold_in needs a Tensor seed or data"),
])
def test_bad_seeds_are_located_errors(build, error, message):
    with mi.Program("p", MESH) as prog:
        p = {"x": prog.argument("x", [D]), "f": prog.argument("f", [], "f32"), "v": prog.argument("v", [D], "i32"),
             "s": prog.argument("s", [], "i32")}
        with pytest.raises(error, match=message) as info:
            build(p)
        assert "test_runtime_seeds.py" in str(info.value)
        prog.result(p["x"])
