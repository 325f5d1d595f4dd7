"""mi.custom_gradient: the user's VJP replaces the block's in the gradient, equal to jax's
custom_vjp of the same computation (float64) on several layouts, NaN/inf included; a VJP
with the wrong count, dims or dtype is a located error at the user's line."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi



@pytest.fixture(autouse=True)
def float64():
    """jax in float64 for these tests only (the oracle and the f64 arguments)."""
    with jax.enable_x64(True):
        yield

B, M = mi.Dim("batch", 8), mi.Dim("d_model", 4)


def _scaled_vjp(inputs, outputs, cotangents):
    """A deliberately non-true gradient: 3 * ct * w for x, reduce_sum(ct * x * y) for w."""
    (x, w), (y,), (ct,) = inputs, outputs, cotangents
    return [ct * w * 3.0, mi.reduce_sum(ct * x * y, output=[M])]


def _jax_loss():
    @jax.custom_vjp
    def f(x, w):
        return jnp.tanh(x * w)

    def fwd(x, w):
        y = f(x, w)
        return y, (x, w, y)

    def bwd(res, ct):
        x, w, y = res
        return ct * w * 3.0, jnp.sum(ct * x * y, axis=0)

    f.defvjp(fwd, bwd)
    return lambda x, w: jnp.sum(f(x, w) ** 2)


def _program(mesh):
    f = mi.custom_gradient(lambda x, w: mi.tanh(x * w), _scaled_vjp)
    with mi.Program("p", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [B, M], "f64")
        w = prog.argument("w", [M], "f64")
        y = f(x, w)
        prog.result(mi.reduce_sum(y * y))
    return prog


@pytest.mark.parametrize("mesh, layout", [({"x": 4, "y": 2}, {"batch": "x", "d_model": "y"}), ({"x": 2}, {})])
@pytest.mark.parametrize("special", [False, True])
def test_custom_vjp_replaces_the_gradient_as_jax_custom_vjp_does(mesh, layout, special):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((8, 4)), rng.standard_normal(4)
    if special:
        x[0, 0], x[3, 2] = np.nan, -np.inf
    want = jax.grad(_jax_loss(), argnums=(0, 1))(x, w)
    g = mi.grad(_program(mesh))
    for got in (mi.interpret(g, x=x, w=w), mi.compile(g, layout=layout)(x=x, w=w)):
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-9)


def test_forward_of_a_custom_gradient_block_compiles_as_a_plain_call():
    x, w = np.ones((8, 4)), np.full(4, 0.5)
    out = mi.compile(_program({"x": 4, "y": 2}), layout={"batch": "x"})(x=x, w=w)
    np.testing.assert_allclose(np.asarray(out), np.sum(np.tanh(x * w) ** 2))


@pytest.mark.parametrize("vjp, message", [
    (lambda i, o, c: [c[0], c[0]], r"cotangent #1 has dims !mtf.tensor<batch=8, d_model=4, f64>, but input #1 has "
                                   r"!mtf.tensor<d_model=4, f64>"),
    (lambda i, o, c: [c[0]], r"the vjp returned 1 cotangents for 2 inputs"),
    (lambda i, o, c: [mi.cast(c[0], "f32"), None], r"cotangent #0 has element type f32, but input #0 has f64"),
    (lambda i, o, c: 3.0, r"the vjp must return one cotangent per input, got"),
])
def test_a_wrong_vjp_is_a_located_error(vjp, message):
    f = mi.custom_gradient(lambda x, w: x * w, vjp)
    with mi.Program("p", mi.Mesh({"x": 2})) as prog:
        x = prog.argument("x", [B, M], "f64")
        w = prog.argument("w", [M], "f64")
        with pytest.raises(mi.MeshIRError, match=r"test_custom_gradient\.py:\d+:\d+: error: mi\.custom_gradient\(lambda\): "
                                                 + message):
            f(x, w)
        prog.result(mi.reduce_sum(x))
    assert "lambda" not in str(prog.module)  # the failed block left nothing behind
