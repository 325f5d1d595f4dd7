"""Gradients through mi.scan and mi.fori_loop (transforms/autodiff/loops.py) against
jax.grad of the same loops in float64, interpreted and compiled on several layouts."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi

MESH = mi.Mesh({"x": 4, "y": 2})
B, T, D = mi.Dim("b", 8), mi.Dim("t", 4), mi.Dim("d", 4)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return dict(c=rng.standard_normal((8, 4)).astype(np.float32),
                xs=rng.standard_normal((8, 4, 4)).astype(np.float32),
                w=rng.standard_normal(4).astype(np.float32))


def _program():
    """A scan over t (carry, xs not leading t, an invariant, stacked ys), then a fori_loop
    with an integer counter in its carry and a scan nested in its body."""
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B, D])
        xs = prog.argument("xs", [B, T, D])
        w = prog.argument("w", [D])

        def body(h, x):
            n = mi.tanh(h * w + x)
            return n, n * n

        h, ys = mi.scan(body, c, xs, dim="t")

        def outer(i, carry):
            v, count = carry
            v = mi.scan(lambda u, x: (u * 0.9 + x, None), v, xs, dim="t")[0]
            return v * w + mi.cast(i, "f32") * 0.1, count + 1

        k, _ = mi.fori_loop(2, outer, (h, mi.constant(0, dtype="i32")))
        prog.result(mi.reduce_sum(k * k) * 0.01 + mi.reduce_sum(ys) * 0.5, name="loss")
    return prog


def _reference(c, xs, w):
    h, ys = c, []
    for i in range(4):
        h = jnp.tanh(h * w + xs[:, i])
        ys.append(h * h)
    for i in range(2):
        v = h
        for j in range(4):
            v = v * 0.9 + xs[:, j]
        h = v * w + i * 0.1
    return jnp.sum(h * h) * 0.01 + jnp.sum(jnp.stack(ys)) * 0.5


def _want(inputs):
    return jax.grad(_reference, argnums=(0, 1, 2))(*(inputs[k].astype(np.float64) for k in ("c", "xs", "w")))


def test_the_gradient_program_equals_jax_grad_in_float64():
    inputs = _inputs()
    got = mi.interpret(mi.grad(_program()), **inputs)
    for g, w in zip(got, _want(inputs)):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
@pytest.mark.parametrize("layout", [{"b": "x", "d": "y"}, {"t": "x", "b": "y"}], ids=["b:x,d:y", "t:x,b:y"])
def test_compiled_gradients_equal_jax_grad(layout, mode):
    inputs = _inputs(1)
    got = mi.compile(mi.grad(_program()), layout=layout, mode=mode)(**inputs)
    for g, w in zip(got, _want(inputs)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=1e-5)


def test_nan_in_one_iteration_reaches_the_gradients_as_in_jax():
    inputs = _inputs(2)
    inputs["xs"][3, 2, 1] = np.nan
    got = mi.interpret(mi.grad(_program()), **inputs)
    for g, w in zip(got, _want(inputs)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(np.asarray(w)))
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=1e-5, equal_nan=True)


def test_a_train_step_over_a_scanned_model_updates_like_the_full_batch():
    """mi.train_step differentiates a loss written with a scan, like any other."""
    with mi.Program("loss", MESH) as prog:
        w = prog.argument("w", [D])
        xs = prog.argument("xs", [T, B, D])
        h = mi.scan(lambda h, x: (mi.tanh(h + x * w), None), mi.constant(0.0, [B, D]), xs, dim="t")[0]
        prog.result(mi.reduce_sum(h * h), name="loss")
    step = mi.train_step(prog, mi.SGD(0.1), params=["w"])
    exe = mi.compile(step, layout={"b": "x"})
    rng = np.random.default_rng(3)
    w0, xs0 = rng.standard_normal(4).astype(np.float32), rng.standard_normal((4, 8, 4)).astype(np.float32)

    def ref(w):
        h = jnp.zeros((8, 4))
        for i in range(4):
            h = jnp.tanh(h + xs0[i] * w)
        return jnp.sum(h * h)

    out = dict(zip(step.program.result_names, exe(w=w0, xs=xs0, step=np.int32(0))))
    new_w = out["w"]
    np.testing.assert_allclose(np.asarray(new_w), w0 - 0.1 * np.asarray(jax.grad(ref)(w0.astype(np.float64))),
                               rtol=2e-4, atol=1e-5)


def test_a_while_loop_has_no_gradient_and_says_where():
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B])
        out = mi.while_loop(lambda v: mi.less(mi.reduce_sum(v), 10.0), lambda v: v * 2.0, c)
        prog.result(mi.reduce_sum(out), name="loss")
    with pytest.raises(mi.MeshIRError, match=r"test_loops_grad.py:\d+:\d+: error: cannot differentiate through "
                                             r"'mtf.while': its trip count is not static"):
        mi.grad(prog)


def test_remat_in_a_loop_body_is_inlined_and_differentiates():
    """A scan's backward recomputes each iteration from its carry: a remat block inside its
    body is built inline (MLIR cannot look a callee up from inside an `mtf` loop)."""
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B, D])
        w = prog.argument("w", [D])
        layer = mi.remat(lambda h, v: mi.tanh(h * v))
        prog.result(mi.reduce_sum(mi.fori_loop(3, lambda i, h: layer(h, w), c) ** 2), name="loss")
    assert "func.call" not in str(prog.module)

    def ref(c, w):
        for _ in range(3):
            c = jnp.tanh(c * w)
        return jnp.sum(c ** 2)

    inputs = _inputs()
    want = jax.grad(ref, argnums=(0, 1))(inputs["c"].astype(np.float64), inputs["w"].astype(np.float64))
    got = mi.compile(mi.grad(prog), layout={"b": "x", "d": "y"})(c=inputs["c"], w=inputs["w"])
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w_, rtol=2e-4, atol=1e-5)


def test_a_custom_gradient_in_a_loop_body_is_refused_where_it_is_called():
    block = mi.custom_gradient(lambda h: h * 2.0, lambda inputs, outputs, cts: (cts[0] * 2.0,))
    with pytest.raises(mi.MeshIRError, match=r"test_loops_grad.py:\d+:\d+: error: .*not supported inside a loop "
                                             r"body yet"):
        with mi.Program("p", MESH) as prog:
            c = prog.argument("c", [B])
            prog.result(mi.fori_loop(2, lambda i, h: block(h), c), name="out")
