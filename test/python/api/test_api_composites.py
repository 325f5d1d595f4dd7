"""Composites (softmax, log_softmax, layer_norm, cross_entropy, gelu, dropout, mean) built
from ops agree with plain NumPy formulas when run through the reference interpreter."""
import math

import numpy as np
import pytest

import meshir as mi

B, V, M = mi.Dim("batch", 6), mi.Dim("vocab", 5), mi.Dim("d_model", 8)
RNG = np.random.default_rng(7)


def run(build, **inputs):
    with mi.Program("p") as prog:
        args = {name: prog.argument(name, dims, dtype) for name, (dims, dtype, _) in inputs.items()}
        prog.result(build(**args))
    return mi.interpret(prog, **{name: value for name, (_, _, value) in inputs.items()})


def logits():
    return ([B, V], "f32", RNG.standard_normal((6, 5)).astype(np.float32) * 3)


def np_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def test_softmax_along_each_dim():
    x = logits()
    for dim, axis in (("vocab", 1), ("batch", 0)):
        got = run(lambda x: mi.softmax(x, dim), x=x)
        np.testing.assert_allclose(got, np.exp(np_log_softmax(x[2], axis)), rtol=1e-5, atol=1e-6)


def test_log_softmax_is_stable_for_large_logits():
    x = ([B, V], "f32", (RNG.standard_normal((6, 5)) * 1000).astype(np.float32))
    got = run(lambda x: mi.log_softmax(x, V), x=x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, np_log_softmax(x[2].astype(np.float64), 1), rtol=1e-5, atol=1e-3)


def test_layer_norm_with_scale_and_bias():
    x = ([B, M], "f32", RNG.standard_normal((6, 8)).astype(np.float32))
    scale = ([M], "f32", RNG.standard_normal(8).astype(np.float32))
    bias = ([M], "f32", RNG.standard_normal(8).astype(np.float32))
    got = run(lambda x, scale, bias: mi.layer_norm(x, M, scale, bias, epsilon=1e-5), x=x, scale=scale, bias=bias)
    v = x[2]
    expected = (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-5) * scale[2] + bias[2]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_cross_entropy_with_ids_and_with_probabilities():
    x = logits()
    ids = RNG.integers(0, 5, size=6).astype(np.int32)
    got_ids = run(lambda x, ids: mi.cross_entropy(x, ids, V), x=x, ids=([B], "i32", ids))
    expected = -np_log_softmax(x[2].astype(np.float64), 1)[np.arange(6), ids]
    np.testing.assert_allclose(got_ids, expected, rtol=1e-5)
    probs = np.eye(5, dtype=np.float32)[ids] * 0.9 + 0.02
    got_probs = run(lambda x, t: mi.cross_entropy(x, t, V), x=x, t=([B, V], "f32", probs))
    np.testing.assert_allclose(got_probs, -(probs * np_log_softmax(x[2], 1)).sum(1), rtol=1e-5)


def test_gelu_tanh_approximation():
    x = ([M], "f32", np.linspace(-4, 4, 8).astype(np.float32))
    got = run(lambda x: mi.gelu(x), x=x)
    v = x[2].astype(np.float64)
    expected = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("over, axes", [(None, (0, 1)), (["batch"], (0,)), (["d_model"], (1,))])
def test_mean(over, axes):
    x = ([B, M], "f32", RNG.standard_normal((6, 8)).astype(np.float32))
    got = run(lambda x: mi.mean(x, over=over), x=x)
    np.testing.assert_allclose(got, x[2].mean(axis=axes), rtol=1e-5, atol=1e-6)


def test_dropout_drops_about_rate_and_rescales_the_rest():
    big = mi.Dim("n", 4000)
    x = ([big], "f32", np.ones(4000, np.float32))
    got = run(lambda x: mi.dropout(x, 0.25, seed=3), x=x)
    kept = got != 0
    assert abs(kept.mean() - 0.75) < 0.03
    np.testing.assert_allclose(got[kept], 1 / 0.75, rtol=1e-6)
    again = run(lambda x: mi.dropout(x, 0.25, seed=3), x=x)
    np.testing.assert_array_equal(got, again)
    other_seed = run(lambda x: mi.dropout(x, 0.25, seed=4), x=x)
    assert (other_seed != got).any()


def test_composites_refuse_integer_tensors():
    with pytest.raises(mi.MeshIRError, match="softmax needs a float tensor"):
        with mi.Program("p") as prog:
            mi.softmax(prog.argument("a", [B, V], "i32"), V)
    with pytest.raises(mi.MeshIRError, match=r"dropout rate must be in \[0, 1\)"):
        with mi.Program("p") as prog:
            mi.dropout(prog.argument("a", [B]), 1.0, seed=0)
