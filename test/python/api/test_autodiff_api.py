"""`mi.grad` / `mi.value_and_grad`: signatures, options, and the errors for gradients that
cannot exist (unknown argument, integer argument, non-scalar or non-float result)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi
from meshir.dialect import parse_module

B, C = mi.Dim("b", 3), mi.Dim("c", 4)
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
W = RNG.standard_normal((4,)).astype(np.float32)
IDS = np.array([0, 2, 1], dtype=np.int32)


def program(result_dims=(), two_results=False):
    with mi.Program("f") as prog:
        x = prog.argument("x", [B, C])
        w = prog.argument("w", [C])
        ids = prog.argument("ids", [B], dtype="i32")
        y = mi.tanh(x * w) + mi.one_hot(ids, C)
        if result_dims:
            prog.result(mi.reduce_sum(y, output=result_dims), name="y")
        else:
            prog.result(mi.reduce_sum(y * y), name="loss")
        if two_results:
            prog.result(mi.reduce_sum(w), name="other")
    return prog


def jax_y(x, w, ids):
    return jnp.tanh(x * w) + jax.nn.one_hot(ids, 4)


def test_value_and_grad_defaults_to_every_float_argument():
    g = mi.value_and_grad(program())
    assert g.argument_names == ("x", "w", "ids")
    assert g.result_names == ("value", "grad_x", "grad_w")
    value, gx, gw = mi.interpret(g, x=X, w=W, ids=IDS)
    jv, (jx, jw) = jax.value_and_grad(lambda x, w: jnp.sum(jax_y(x, w, IDS) ** 2), argnums=(0, 1))(X, W)
    np.testing.assert_allclose(value, jv, rtol=1e-5)
    np.testing.assert_allclose(gx, jx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, jw, rtol=1e-5, atol=1e-6)


def test_grad_returns_only_gradients_in_wrt_order():
    prog = program()
    g = mi.grad(prog, wrt=["w", "x"])
    assert g.result_names == ("grad_w", "grad_x")
    gw, gx = mi.interpret(g, x=X, w=W, ids=IDS)
    single = mi.interpret(mi.grad(prog, wrt="w"), x=X, w=W, ids=IDS)  # one result: one array
    np.testing.assert_array_equal(single, gw)
    assert gx.shape == (3, 4)


def test_wrt_accepts_argument_tensors_and_leaves_the_program_unchanged():
    with mi.Program("f") as prog:
        x = prog.argument("x", [B, C])
        w = prog.argument("w", [C])
        prog.result(mi.reduce_sum(x * w))
    before = str(prog.module)
    g = mi.grad(prog, wrt=[w])
    assert g.result_names == ("grad_w",)
    np.testing.assert_allclose(mi.interpret(g, x=X, w=W), X.sum(0), rtol=1e-6)
    assert str(prog.module) == before
    assert "@f_grad" in str(g.module) and "@f(" not in str(g.module)


def test_independent_argument_gets_zeros():
    with mi.Program("f") as prog:
        x = prog.argument("x", [B, C])
        w = prog.argument("w", [C])
        prog.result(mi.reduce_sum(mi.sign(x) + mi.stop_gradient(w) * 2.0 + mi.floor(x)))
    gx, gw = mi.interpret(mi.grad(prog), x=X, w=W)
    np.testing.assert_array_equal(gx, np.zeros_like(X))
    np.testing.assert_array_equal(gw, np.zeros_like(W))


def test_cotangent_argument_gives_a_vjp_of_a_non_scalar_result():
    g = mi.value_and_grad(program(result_dims=[C]), wrt=["x", "w"], cotangent=True)
    assert g.argument_names == ("x", "w", "ids", "cotangent")
    ct = RNG.standard_normal((4,)).astype(np.float32)
    value, gx, gw = mi.interpret(g, x=X, w=W, ids=IDS, cotangent=ct)
    out, vjp = jax.vjp(lambda x, w: jnp.sum(jax_y(x, w, IDS), axis=0), X, W)
    jx, jw = vjp(ct)
    np.testing.assert_allclose(value, out, rtol=1e-5)
    np.testing.assert_allclose(gx, jx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, jw, rtol=1e-5, atol=1e-6)


def test_result_picks_one_of_several():
    g = mi.grad(program(two_results=True), wrt=["w"], result="other")
    np.testing.assert_array_equal(mi.interpret(g, x=X, w=W, ids=IDS), np.ones(4, np.float32))


def test_second_derivative_by_differentiating_the_gradient():
    with mi.Program("cube") as prog:
        x = prog.argument("x", [], dtype="f64")
        prog.result(x * x * x + mi.sin(x))
    first = mi.value_and_grad(prog)
    second = mi.grad(first, result="grad_x")
    np.testing.assert_allclose(mi.interpret(second, x=np.float64(0.7)), 6 * 0.7 - np.sin(0.7), rtol=1e-12)


def test_gradient_of_a_parsed_module_with_a_helper_function():
    text = """
    func.func private @helper(%a: !mtf.tensor<b=3, f32>) -> !mtf.tensor<b=3, f32> {
      return %a : !mtf.tensor<b=3, f32>
    }
    func.func @f(%x: !mtf.tensor<b=3, f32> {mtf.name = "x"}, %k: !mtf.tensor<b=3, f32> {mtf.name = "k"}) -> !mtf.tensor<f32> {
      %c = func.call @helper(%k) : (!mtf.tensor<b=3, f32>) -> !mtf.tensor<b=3, f32>
      %0 = "mtf.mul"(%x, %c) : (!mtf.tensor<b=3, f32>, !mtf.tensor<b=3, f32>) -> !mtf.tensor<b=3, f32>
      %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=3, f32>) -> !mtf.tensor<f32>
      return %1 : !mtf.tensor<f32>
    }
    """
    module, diags = parse_module(text, "f.mlir")
    assert not diags
    k = np.array([1.0, 2.0, 3.0], np.float32)
    g = mi.grad(module, function="f", wrt=["x"])  # the call is not on the path to x
    np.testing.assert_array_equal(mi.interpret(g, x=np.zeros(3, np.float32), k=k), k)
    x = np.array([4.0, 5.0, 6.0], np.float32)  # through the call (issue 14): d/dk sum(x * k) = x
    np.testing.assert_array_equal(mi.interpret(mi.grad(module, function="f", wrt=["k"]), x=x, k=k), x)


# -- errors ------------------------------------------------------------------------------------------
def _raises(match, fn, *args, **kwargs):
    with pytest.raises(mi.MeshIRError, match=match) as info:
        fn(*args, **kwargs)
    assert str(info.value).startswith(__file__), str(info.value)  # located at the caller's line
    assert "Traceback" not in str(info.value)
    return str(info.value)


def test_unknown_argument_is_an_error():
    _raises(r"cannot differentiate @f with respect to 'v': no such argument \(arguments: x, w, ids\)",
            mi.grad, program(), wrt=["x", "v"])


def test_integer_argument_is_an_error():
    _raises(r"with respect to 'ids': its element type is i32, gradients exist only for float arguments",
            mi.value_and_grad, program(), wrt=["ids"])


def test_non_scalar_result_is_an_error():
    message = _raises(r"result 'y' of @f is not a scalar", mi.grad, program(result_dims=[C]))
    assert "cotangent" in message


def test_several_results_need_a_choice():
    _raises(r"@f has 2 results \(loss, other\); say which one to differentiate", mi.grad, program(two_results=True))
    _raises(r"@f has no result 'nope' \(results: loss, other\)", mi.grad, program(two_results=True), result="nope")


def test_integer_result_is_an_error():
    with mi.Program("count") as prog:
        x = prog.argument("x", [B])
        prog.result(mi.reduce_sum(mi.cast(x, "i32")))
    _raises(r"its element type is i32, gradients need a float result", mi.grad, prog)


def test_wrt_named_twice_and_no_float_argument_are_errors():
    _raises(r"argument 'x' is named twice in wrt", mi.grad, program(), wrt=["x", "x"])
    with mi.Program("ints") as prog:
        i = prog.argument("i", [B], dtype="i32")
        prog.result(mi.reduce_sum(mi.cast(i, "f32")))
    _raises(r"@ints has no float argument to differentiate with respect to \(arguments: i\)", mi.grad, prog)
