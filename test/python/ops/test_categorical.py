"""mi.categorical: the same samples under every layout (and as the interpreter draws them),
a new draw for each runtime seed, the distribution softmax(logits / temperature) by a
chi-squared test over many draws, and bad input."""
import numpy as np
import pytest

import meshir as mi

N, C = mi.Dim("n", 4096), mi.Dim("c", 6)
LOGITS = np.log(np.array([0.05, 0.1, 0.15, 0.2, 0.2, 0.3], np.float32))
#: The 0.999 quantile of chi-squared with 5 degrees of freedom: a correct sampler fails one
#: seed in a thousand; the seeds below are fixed, so the test is deterministic.
CHI2_999 = 20.52


def program(mesh_shape, rules, temperature=1.0):
    with mi.Program("sample", mi.Mesh(mesh_shape), layout=rules) as prog:
        logits, seed = prog.argument("logits", [N, C]), prog.argument("seed", [], "i32")
        prog.result(mi.categorical(logits, "c", seed, temperature), name="samples")
    return prog


def chi2(samples, probabilities):
    counts = np.bincount(np.asarray(samples).ravel(), minlength=len(probabilities))
    expected = probabilities * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


LAYOUTS = [({"x": 8}, {}), ({"x": 8}, {"n": "x"}), ({"x": 2, "y": 3}, {"n": "x", "c": "y"}), ({"x": 2}, {"c": "x"})]


def test_every_layout_draws_the_interpreters_samples_and_each_seed_a_new_draw():
    logits = np.broadcast_to(LOGITS, (N.size, C.size)).copy()
    draws = {}
    for mesh_shape, rules in LAYOUTS:
        prog = program(mesh_shape, rules)
        exe = mi.compile(prog)
        for seed in (np.int32(0), np.int32(-7)):
            got = np.asarray(exe(logits, seed))
            assert got.dtype == np.int32 and got.shape == (N.size,)
            draws.setdefault(int(seed), got)
            np.testing.assert_array_equal(got, draws[int(seed)])
        np.testing.assert_array_equal(np.asarray(mi.interpret(prog, logits, np.int32(0))), draws[0])
    assert np.mean(draws[0] != draws[-7]) > 0.5


@pytest.mark.parametrize("temperature", [1.0, 0.5, 3.0])
def test_samples_follow_softmax_of_logits_over_temperature(temperature):
    logits = np.broadcast_to(LOGITS, (N.size, C.size)).copy()
    exe = mi.compile(program({"x": 8}, {"n": "x"}, temperature))
    want = softmax(LOGITS.astype(np.float64) / temperature)
    for seed in (1, 2, 3):
        assert chi2(exe(logits, np.int32(seed)), want) < CHI2_999
    # the test can fail: the samples are not those of the logits without the temperature
    if temperature != 1.0:
        assert chi2(exe(logits, np.int32(1)), softmax(LOGITS.astype(np.float64))) > CHI2_999


def test_minus_infinity_logits_are_never_drawn_and_bf16_logits_are_accepted():
    logits = np.broadcast_to(LOGITS, (N.size, C.size)).copy()
    logits[:, 1] = -np.inf
    samples = np.asarray(mi.compile(program({"x": 8}, {"n": "x"}))(logits, np.int32(5)))
    assert 1 not in samples and set(samples) == {0, 2, 3, 4, 5}
    with mi.Program("bf16", mi.Mesh({"x": 2})) as prog:
        prog.result(mi.categorical(prog.argument("logits", [N, C], "bf16"), "c", 3))
    import ml_dtypes
    got = np.asarray(mi.compile(prog)(np.broadcast_to(LOGITS, (N.size, C.size)).astype(ml_dtypes.bfloat16)))
    assert chi2(got, softmax(LOGITS.astype(ml_dtypes.bfloat16).astype(np.float64))) < CHI2_999


def test_bad_input_is_a_located_error():
    with mi.Program("bad", mi.Mesh({"x": 2})) as prog:
        logits = prog.argument("logits", [N, C])
        ids = prog.argument("ids", [N, C], "i32")
        seed = prog.argument("seed", [], "f32")
        cases = [
            (lambda: mi.categorical(logits, "c", 0, temperature=0.0), "temperature must be a positive finite number, got 0.0"),
            (lambda: mi.categorical(logits, "c", 0, temperature=-1), "got -1"),
            (lambda: mi.categorical(logits, "c", 0, temperature=float("inf")), "got inf"),
            (lambda: mi.categorical(logits, "d", 0), "'d' is not a dimension"),
            (lambda: mi.categorical(ids, "c", 0), "categorical needs a float tensor, got element type i32"),
            (lambda: mi.categorical(logits, "c", seed), "seed"),
            (lambda: mi.categorical(logits, "c", 1.5), "seed"),
        ]
        for make, message in cases:
            with pytest.raises(mi.MeshIRError, match=message) as info:
                make()
            assert "test_categorical.py" in str(info.value)
