"""`mi.jit` (eager/jit.py): a Python function on named arrays traced into one program per
signature, compiled and cached.

A retrace for each new signature (dims, element types, layouts, static arguments, the rules in
context) and none for new values; `lower`; `mi.grad` / `mi.value_and_grad` of a traced
function against jax.grad; `mi.train_step` of a lowered function for three SGD steps against
NumPy; traced functions calling each other (one program); pytree and `dims=` arguments;
an array the function closes over; `donate_argnames`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi
import eager_fixtures

compiles = eager_fixtures.compiles  # a fixture

MESH = mi.Mesh("x:2;y:2")
B, D, N = mi.Dim("b", 4), mi.Dim("d", 8), mi.Dim("n", 2)
RNG = np.random.default_rng(35)
XV = RNG.standard_normal((4, 8)).astype(np.float32)
WV = (RNG.standard_normal((8, 2)) / 3).astype(np.float32)


def arr(value, dims, layout=None, dtype=None):
    return mi.array(value, dims, mesh=MESH, layout=layout, dtype=dtype)


def exp_times(x, scale):
    return mi.exp(x) * scale


scaled = mi.jit(exp_times, static_argnames=("scale",))


def test_one_trace_per_signature(compiles):
    scaled = mi.jit(static_argnames=("scale",))(exp_times)  # its own cache: the counts are this test's
    x = arr(XV, [B, D])
    np.testing.assert_allclose(scaled(x, 2.0).numpy(), np.exp(XV) * 2, rtol=1e-6)
    assert compiles.traced == 1 and len(scaled._cache) == 1
    np.testing.assert_allclose(scaled(arr(-XV, [B, D]), scale=2.0).numpy(), np.exp(-XV) * 2, rtol=1e-6)
    assert compiles.traced == 1  # new values, same signature
    signatures = [
        ("dims", lambda: scaled(arr(XV, ["b", "e"]), 2.0)),
        ("element type", lambda: scaled(arr(XV, [B, D], dtype="bf16"), 2.0)),
        ("layout", lambda: scaled(arr(XV, [B, D], layout={"b": "x"}), 2.0)),
        ("static argument", lambda: scaled(x, 3.0)),
    ]
    for i, (what, call) in enumerate(signatures):
        out = call()
        assert compiles.traced == 2 + i, what
        call()
        assert compiles.traced == 2 + i, what
    assert out.numpy() == pytest.approx(np.exp(XV) * 3, rel=1e-6)
    assert scaled(arr(XV, [B, D], dtype="bf16"), 2.0).dtype == "bf16"
    assert scaled(arr(XV, [B, D], layout={"b": "x"}), 2.0).layout == {"b": ("x",), "d": ()}
    with mi.default_layout({"d": "y"}):  # the rules in context: a signature
        scaled(x, 2.0)
        scaled(x, 2.0)
        with mi.default_layout({"d": "x"}):
            scaled(x, 2.0)
    assert compiles.traced == 7 and len(scaled._cache) == 7
    assert repr(scaled) == "<mi.jit of exp_times, 7 compiled signature(s)>"


def test_cache_info_counts_traces_as_functools_does(compiles):
    """A loop over new values of one signature is all hits; each new signature one miss (one
    trace, counted independently by the fixture); `cache_clear` makes the next call retrace."""
    scaled = mi.jit(static_argnames=("scale",))(exp_times)
    assert scaled.cache_info() == (0, 0, 512, 0)
    x = arr(XV, [B, D])
    for i in range(4):
        scaled(x + float(i), 2.0)
    info = scaled.cache_info()
    assert info == (3, 1, 512, 1) and compiles.traced == info.misses
    assert (info.hits, info.misses, info.maxsize, info.currsize) == tuple(info)
    scaled(x, 3.0)
    scaled.lower(x, 3.0)  # a lowering is a lookup too
    assert scaled.cache_info() == (4, 2, 512, 2) and compiles.traced == 2
    scaled.cache_clear()
    assert scaled.cache_info() == (0, 0, 512, 0)
    scaled(x, 2.0)
    assert scaled.cache_info() == (0, 1, 512, 1) and compiles.traced == 3
    gradient = mi.grad(mi.jit(loss.fn), wrt="w")  # its own caches
    w, xs = arr(WV, [D, N]), arr(XV, [B, D])
    for _ in range(3):
        gradient(w, xs)
    assert gradient.cache_info()[:2] == (2, 1) and gradient.cache_info().currsize == 1


def test_lower():
    x = arr(XV, [B, D], layout={"b": "x"})
    scaled(x, 2.0)
    before = len(scaled._cache)
    lowered = scaled.lower(x, 2.0)
    assert len(scaled._cache) == before  # the cached signature
    assert isinstance(lowered.program, mi.Program) and lowered.mesh == MESH
    assert (lowered.argument_names, lowered.result_names) == (("x",), ("r0",))
    text = lowered.as_text()
    assert text == str(lowered.module) and "func.func @exp_times" in text and "mtf.exp" in text
    assert "!mtf.tensor<b=4@x, d=8@(), f32>" in text
    assert "stablehlo.exponential" in lowered.stablehlo_text()
    out = lowered.executable(x.jax_array)
    np.testing.assert_allclose(np.asarray(out), np.exp(XV) * 2, rtol=1e-6)
    assert mi.Array(out, ["b", "d"]).layout == {"b": ("x",), "d": ()}
    np.testing.assert_allclose(mi.interpret(lowered.program, x=XV), np.exp(XV) * 2, rtol=1e-6)
    scaled.lower(x, 5.0)  # lowering a new signature compiles it, for later calls too
    assert len(scaled._cache) == before + 1


# -- gradients ------------------------------------------------------------------------------------

@mi.jit
def loss(w, x):
    h = mi.tanh(mi.einsum(x, w))
    return mi.reduce_sum(h * h) + mi.mean(w * w)


def jax_loss(w, x):
    h = jnp.tanh(x @ w)
    return jnp.sum(h * h) + jnp.mean(w * w)


def test_grad_and_value_and_grad_of_a_traced_function_match_jax():
    w, x = arr(WV, [D, N]), arr(XV, [B, D], layout={"b": "x"})
    value, (grad_w, grad_x) = jax.value_and_grad(jax_loss, argnums=(0, 1))(WV, XV)
    out = mi.value_and_grad(loss, wrt=["w", "x"])(w, x)
    assert out._fields == ("value", "grad_w", "grad_x")
    assert all(isinstance(a, mi.Array) for a in out)
    assert float(out.value) == pytest.approx(float(value), rel=1e-5)
    np.testing.assert_allclose(out.grad_w.numpy(), grad_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.grad_x.numpy(), grad_x, rtol=1e-5, atol=1e-6)
    assert out.grad_w.names == ("d", "n") and out.grad_x.layout == {"b": ("x",), "d": ()}
    only_w = mi.grad(loss, wrt=["w"])
    got = only_w(w, x)  # one result: the array itself, as jax.grad of one argument and mi.compile give
    assert isinstance(got, mi.Array) and got.names == ("d", "n")
    np.testing.assert_allclose(got.numpy(), grad_w, rtol=1e-5, atol=1e-6)
    got = only_w(arr(WV * 2, [D, N]), x)  # the compiled gradient again, new values
    np.testing.assert_allclose(got.numpy(), jax.grad(jax_loss)(WV * 2, XV), rtol=1e-5, atol=1e-6)
    assert len(only_w._cache) == 1 and len(loss._cache) == 1


def test_train_step_of_a_lowered_function_matches_numpy_sgd():
    w, x = arr(WV, [D, N]), arr(XV, [B, D], layout={"b": "x"})
    step = mi.train_step(loss.lower(w, x), mi.SGD(0.1), params=["w"])
    exe = mi.compile(step)
    current, want = w.jax_array, WV.astype(np.float64)
    for t in range(1, 4):
        out = exe(w=current, x=x.jax_array, step=float(t))
        h = np.tanh(XV @ want)
        value = (h * h).sum() + (want * want).mean()
        assert float(out.loss) == pytest.approx(value, rel=1e-5)
        want = want - 0.1 * (XV.T @ (2 * h * (1 - h * h)) + 2 * want / want.size)
        current = out.w
        np.testing.assert_allclose(np.asarray(current), want, rtol=1e-5, atol=1e-6)
    assert mi.Array(current, [D, N]).mesh == MESH


# -- composition and arguments ---------------------------------------------------------------------

@mi.jit
def inner(a):
    return mi.exp(a) * 2.0


@mi.jit
def outer(a, w):
    return mi.einsum(inner(a), w)


def test_traced_functions_calling_each_other_make_one_program():
    x, w = arr(XV, [B, D], layout={"b": "x"}), arr(WV, [D, N])
    lowered = outer.lower(x, w)
    assert lowered.as_text().count("func.func") == 1 and "func.call" not in lowered.as_text()
    assert len(inner._cache) == 0  # inner ran inline, traced into outer's program
    np.testing.assert_allclose(outer(x, w).numpy(), (np.exp(XV) * 2) @ WV, rtol=1e-5)
    np.testing.assert_allclose(inner(x).numpy(), np.exp(XV) * 2, rtol=1e-6)  # on its own: its own program
    assert len(inner._cache) == 1


def test_pytree_dims_and_closed_over_arguments():
    params = {"w1": arr(WV, [D, N]), "w2": arr(np.ones(2, np.float32), [N])}
    bias = arr(np.full(2, 0.5, np.float32), [N])

    @mi.jit(dims={"x": [B, D]}, mesh=MESH)
    def layer(params, x, act="tanh"):
        y = mi.einsum(x, params["w1"]) * params["w2"] + bias  # bias: a constant of the program
        return {"y": getattr(mi, act)(y), "sum": mi.reduce_sum(y)}

    out = layer(params, XV)  # x as NumPy: dims= makes it an mi.Array on the mesh
    assert set(out) == {"y", "sum"}
    np.testing.assert_allclose(out["y"].numpy(), np.tanh(XV @ WV + 0.5), rtol=1e-5)
    assert float(out["sum"]) == pytest.approx(float((XV @ WV + 0.5).sum()), rel=1e-5)
    assert layer.lower(params, XV).argument_names == ("params_w1", "params_w2", "x")
    np.testing.assert_allclose(layer(params, XV, act="exp")["y"].numpy(), np.exp(XV @ WV + 0.5), rtol=1e-5)
    assert len(layer._cache) == 2


def test_donated_argument_is_deleted_after_the_call():
    @mi.jit(donate_argnames="a")
    def update(a, b):
        return a - b * 0.5

    for _ in range(2):  # the second call runs the cached program
        a, b = arr(XV, [B, D], layout={"b": "x"}), arr(XV, [B, D], layout={"b": "x"})
        out = update(a, b)
        assert a.jax_array.is_deleted() and not b.jax_array.is_deleted()
        np.testing.assert_allclose(out.numpy(), XV * 0.5, rtol=1e-6)
    assert len(update._cache) == 1


def test_which_argument_is_an_array_is_part_of_the_signature():
    sub = mi.jit(lambda a, b: a - b)
    x = arr(XV, [B, D])
    np.testing.assert_allclose(sub(x, 1.0).numpy(), XV - 1, rtol=1e-6)
    np.testing.assert_allclose(sub(1.0, x).numpy(), 1 - XV, rtol=1e-6)  # not the program of (x, 1.0): a fixed bug
    assert len(sub._cache) == 2


def test_static_values_that_compare_equal_but_differ_compile_apart():
    """0.0 and -0.0, (1,) and (True,): equal in Python, different programs (review finding)."""
    import math

    @mi.jit(static_argnames=("s",))
    def signed(x, s):
        return x * math.copysign(1.0, s)

    @mi.jit(static_argnames=("s",))
    def kind(x, s):
        return x * (2.0 if isinstance(s[0], bool) else 3.0)

    x = arr(XV, ["b", "d"])
    np.testing.assert_array_equal(signed(x, 0.0).numpy(), XV)
    np.testing.assert_array_equal(signed(x, -0.0).numpy(), -XV)
    np.testing.assert_array_equal(kind(x, (1,)).numpy(), 3 * XV)
    np.testing.assert_array_equal(kind(x, (True,)).numpy(), 2 * XV)


def test_a_mesh_given_to_jit_is_the_arrays_mesh_or_an_error():
    on_other = mi.array(XV, ["b", "d"], mesh=mi.Mesh("x:2"))
    f = mi.jit(lambda x: x * 2.0, mesh=MESH)
    with pytest.raises(mi.MeshIRValueError, match=r"was traced for mesh .*\"y\"=2.*but argument 'x' is on "):
        f(on_other)
    np.testing.assert_array_equal(f(arr(XV, ["b", "d"])).numpy(), 2 * XV)
