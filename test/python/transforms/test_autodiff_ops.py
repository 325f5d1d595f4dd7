"""mtf-autodiff, op by op: for every differentiable op (and the composites built from them),
`loss = reduce_sum(f(args) * weights)` is differentiated with `mi.value_and_grad`, run with
the reference interpreter in f64, and compared with
  (a) `jax.value_and_grad` of the same computation in jax.numpy (x64), and
  (b) central finite differences of the forward program (interpreter, f64).
Points where an op is not differentiable (ties, 0 for abs/relu) are kept out of (a)+(b) and
checked against JAX's conventions separately at the end.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np
import pytest

import meshir as mi
from meshir.dialect.interpreter import run_function
from meshir.dialect.random_bits import normal as random_normal_values
from meshir.dialect.signature import entry_function

MESH = mi.Mesh({"x": 2, "y": 2})
SIZES = {"a": 2, "b": 3, "c": 4, "v": 5}


def D(spec: str) -> list[mi.Dim]:
    """`"ab"` -> [Dim("a", 2), Dim("b", 3)]."""
    return [mi.Dim(n, SIZES[n]) for n in spec]


@dataclass
class Case:
    id: str
    args: list  # (name, dims, kind): kind n normal, p positive, z away from 0, f non-integer, i<k> ids in [0, k)
    mtf: Callable
    jax: Callable
    fd: bool = True  # stop_gradient makes the gradient differ from finite differences on purpose
    fd_eps: float = 1e-6
    fd_tol: float = 1e-6


def arg(name, dims, kind="n"):
    return (name, D(dims) if isinstance(dims, str) else dims, kind)


def jshift(x, axis, offset, fill):
    """out[i] = x[i - offset] along axis, vacated places `fill` (the mtf.shift semantics)."""
    n = x.shape[axis]
    src = jnp.arange(n) - offset
    taken = jnp.take(x, jnp.clip(src, 0, n - 1), axis=axis)
    keep = ((src >= 0) & (src < n)).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    return jnp.where(keep, taken, fill)


RANDOM = random_normal_values(7, (2, 4), 0.0, 1.0, "f64")
GELU_C = np.sqrt(2 / np.pi)

CASES = [
    # -- unary ---------------------------------------------------------------------------------------
    Case("neg", [arg("x", "ab")], lambda x: -x, lambda x: -x),
    Case("abs", [arg("x", "ab", "z")], lambda x: mi.abs(x), jnp.abs),
    Case("exp", [arg("x", "ab")], mi.exp, jnp.exp),
    Case("log", [arg("x", "ab", "p")], mi.log, jnp.log),
    Case("sqrt", [arg("x", "ab", "p")], mi.sqrt, jnp.sqrt),
    Case("rsqrt", [arg("x", "ab", "p")], mi.rsqrt, jax.lax.rsqrt),
    Case("tanh", [arg("x", "ab")], mi.tanh, jnp.tanh),
    Case("logistic", [arg("x", "ab")], mi.logistic, jax.nn.sigmoid),
    Case("erf", [arg("x", "ab")], mi.erf, jax.scipy.special.erf),
    Case("sin", [arg("x", "ab")], mi.sin, jnp.sin),
    Case("cos", [arg("x", "ab")], mi.cos, jnp.cos),
    Case("sign", [arg("x", "ab", "z")], lambda x: mi.sign(x) * x, lambda x: jnp.sign(x) * x),
    Case("floor", [arg("x", "ab", "f")], lambda x: mi.floor(x) * x + x, lambda x: jnp.floor(x) * x + x),
    Case("relu", [arg("x", "ab", "z")], mi.relu, jax.nn.relu),
    Case("stop_gradient", [arg("x", "ab")], lambda x: x * mi.stop_gradient(x),
         lambda x: x * jax.lax.stop_gradient(x), fd=False),
    Case("cast_f32", [arg("x", "ab")], lambda x: mi.cast(mi.cast(x, "f32"), "f64") * 3.0,
         lambda x: x.astype(jnp.float32).astype(jnp.float64) * 3.0, fd_eps=1e-3, fd_tol=1e-3),
    Case("cast_int", [arg("x", "ab", "f")], lambda x: mi.cast(mi.cast(x, "i32"), "f64") * x,
         lambda x: jnp.trunc(x) * x),
    # -- binary, broadcasting by name ---------------------------------------------------------------
    Case("add", [arg("x", "ab"), arg("y", "b")], lambda x, y: x + y, lambda x, y: x + y),
    Case("add_reordered", [arg("y", "b"), arg("x", "ab")], lambda y, x: y + x, lambda y, x: y[:, None] + x.T),
    Case("sub", [arg("x", "ab"), arg("y", "a")], lambda x, y: x - y, lambda x, y: x - y[:, None]),
    Case("mul", [arg("x", "ab"), arg("y", "bc")], lambda x, y: x * y, lambda x, y: x[:, :, None] * y[None]),
    Case("div", [arg("x", "ab"), arg("y", "b", "z")], lambda x, y: x / y, lambda x, y: x / y),
    Case("scalar_ops", [arg("x", "ab", "p")], lambda x: 2.0 / x - 1.5 * x + 0.5,
         lambda x: 2.0 / x - 1.5 * x + 0.5),
    Case("max", [arg("x", "ab"), arg("y", "b")], mi.maximum, jnp.maximum),
    Case("min", [arg("x", "ab"), arg("y", "ab")], mi.minimum, jnp.minimum),
    Case("pow", [arg("x", "ab", "p"), arg("y", "b")], mi.pow, jnp.power),
    Case("select", [arg("x", "ab"), arg("y", "b")], lambda x, y: mi.select(x > y, x * 2.0, y),
         lambda x, y: jnp.where(x > y, x * 2.0, y)),
    Case("select_scalar_branch", [arg("x", "ab")], lambda x: mi.select(x > 0.0, 0.0, x * x),
         lambda x: jnp.where(x > 0.0, 0.0, x * x)),
    # -- contraction and reductions -----------------------------------------------------------------
    Case("einsum_matmul", [arg("x", "ab"), arg("w", "bc")], lambda x, w: mi.einsum(x, w, output=D("ac")),
         lambda x, w: x @ w),
    Case("einsum_three", [arg("x", "ab"), arg("y", "bc"), arg("z", "c")],
         lambda x, y, z: mi.einsum(x, y, z, output=D("a")), lambda x, y, z: jnp.einsum("ab,bc,c->a", x, y, z)),
    Case("einsum_summed_alone", [arg("x", "ab"), arg("y", "c")], lambda x, y: mi.einsum(x, y, output=D("ca")),
         lambda x, y: jnp.einsum("ab,c->ca", x, y)),
    Case("einsum_same_operand", [arg("x", "ab")], lambda x: mi.einsum(x, x, output=[]), lambda x: jnp.sum(x * x)),
    Case("einsum_transpose", [arg("x", "ab")], lambda x: mi.einsum(x, output=D("ba")), lambda x: x.T),
    Case("einsum_batch", [arg("x", "ab"), arg("y", "ba")], lambda x, y: mi.einsum(x, y, output=D("a")),
         lambda x, y: jnp.einsum("ab,ba->a", x, y)),
    Case("reduce_sum", [arg("x", "abc")], lambda x: mi.reduce_sum(x, over=["b"]), lambda x: x.sum(1)),
    Case("reduce_sum_reordered", [arg("x", "abc")], lambda x: mi.reduce_sum(x, output=D("ca")),
         lambda x: x.sum(1).T),
    Case("reduce_max", [arg("x", "abc")], lambda x: mi.reduce_max(x, over=["b"]), lambda x: x.max(1)),
    Case("reduce_min", [arg("x", "abc")], lambda x: mi.reduce_min(x, output=D("c")), lambda x: x.min((0, 1))),
    Case("reduce_max_all", [arg("x", "ab")], lambda x: mi.reduce_max(x), jnp.max),
    # -- shape -------------------------------------------------------------------------------------------
    Case("broadcast", [arg("x", "ab")], lambda x: mi.broadcast(x, D("bca")),
         lambda x: jnp.broadcast_to(x.T[:, None, :], (3, 4, 2))),
    Case("reshape_merge", [arg("x", "ab")], lambda x: mi.reshape(x, [mi.Dim("ab", 6)]), lambda x: x.reshape(6)),
    Case("reshape_regroup", [arg("x", "abc")], lambda x: mi.reshape(x, [mi.Dim("b", 3), mi.Dim("m", 8)]),
         lambda x: x.reshape(3, 8)),
    Case("rename", [arg("x", "ab"), arg("y", "c")], lambda x, y: mi.rename(x, "b", "c2") * 2.0 + mi.rename(y, "c", "q"),
         lambda x, y: (x * 2.0)[:, :, None] + y[None, None, :]),
    Case("transpose", [arg("x", "abc")], lambda x: mi.transpose(x, ["c", "a", "b"]), lambda x: x.transpose(2, 0, 1)),
    Case("slice", [arg("x", "ac")], lambda x: mi.slice(x, "c", 1, 2), lambda x: x[:, 1:3]),
    Case("concat", [arg("x", "ab"), arg("y", [mi.Dim("a", 2), mi.Dim("b", 2)])],
         lambda x, y: mi.concat([x, y, x], "b"), lambda x, y: jnp.concatenate([x, y, x], axis=1)),
    # split: every piece's cotangent comes back, an unused piece's as zeros
    Case("split", [arg("x", "ac")], lambda x: (lambda p: mi.concat([p[2], p[0] * 3.0], "c"))(mi.split(x, "c", [1, 2, 1])),
         lambda x: jnp.concatenate([x[:, 3:4], x[:, 0:1] * 3.0], axis=1)),
    Case("split_one_piece_used", [arg("x", "ac")], lambda x: mi.split(x, "c", 2)[1], lambda x: x[:, 2:4]),
    Case("pad", [arg("x", "ab")], lambda x: mi.pad(x, "b", 1, 2, value=3.0),
         lambda x: jnp.pad(x, ((0, 0), (1, 2)), constant_values=3.0)),
    Case("shift", [arg("x", "ac")], lambda x: mi.shift(x, "c", 1, fill=5.0), lambda x: jshift(x, 1, 1, 5.0)),
    Case("shift_back", [arg("x", "ac")], lambda x: mi.shift(x, "c", -2), lambda x: jshift(x, 1, -2, 0.0)),
    Case("shift_wrap", [arg("x", "ac")], lambda x: mi.shift(x, "c", 3, wrap=True), lambda x: jnp.roll(x, 3, axis=1)),
    # -- indexing and creation ---------------------------------------------------------------------
    Case("gather", [arg("table", "vc"), arg("ids", "ab", "i7")], lambda t, i: mi.gather(t, i, "v"),
         lambda t, i: jnp.einsum("abv,vc->abc", jax.nn.one_hot(i, 5, dtype=t.dtype), t)),
    Case("one_hot", [arg("x", "av"), arg("ids", "a", "i5")], lambda x, i: mi.one_hot(i, mi.Dim("v", 5), "f64") * x,
         lambda x, i: jax.nn.one_hot(i, 5, dtype=x.dtype) * x),
    # top_k (values differentiable, indices not) and argmax/argmin (no gradient)
    Case("top_k_argmax", [arg("x", "ac")],
         lambda x: mi.top_k(x, "c", mi.Dim("k", 2))[0] * mi.cast(mi.argmax(x, "c") + mi.argmin(x, "c"), "f64"),
         lambda x: jax.lax.top_k(x, 2)[0] * (jnp.argmax(x, axis=1) + jnp.argmin(x, axis=1))[:, None].astype(x.dtype)),
    Case("cumsum_cumprod", [arg("x", "ac")],
         lambda x: mi.cumsum(x, "c", reverse=True) * mi.cumprod(x, "c", exclusive=True),
         lambda x: jax.lax.cumsum(x, axis=1, reverse=True)
         * jnp.concatenate([jnp.ones_like(x[:, :1]), jax.lax.cumprod(x, axis=1)[:, :-1]], axis=1)),
    Case("dot_product_attention", [arg("q", "abc"), arg("k", "avc"), arg("v", "avc"), arg("bias", "bv")],
         lambda q, k, v, bias: mi.dot_product_attention(q, k, v, query_length="b", key_length="v", key_dim="c",
                                                        causal=True, bias=bias, block_size=2),
         lambda q, k, v, bias: jnp.einsum("abv,avc->abc", jax.nn.softmax(jnp.where(
             jnp.arange(5)[None, :] <= jnp.arange(3)[:, None] + 2,
             jnp.einsum("abc,avc->abv", q, k) / 2.0 + bias, -1e9), axis=-1), v)),
    Case("dynamic_slices", [arg("x", "ac")],
         lambda x: mi.dynamic_update_slice(x, "c", 1, mi.dynamic_slice(x, "c", 2, 2) * 3.0) * x,
         lambda x: jax.lax.dynamic_update_slice_in_dim(x, jax.lax.dynamic_slice_in_dim(x, 2, 2, axis=1) * 3.0, 1,
                                                       axis=1) * x),
    Case("iota_constant_random", [arg("x", "ac")],
         lambda x: x * mi.iota(D("ac"), "c", "f64") + mi.random_normal(D("ac"), 7, dtype="f64") + 2.0,
         lambda x: x * jnp.arange(4.0)[None, :] + RANDOM + 2.0),
    # -- layout annotations and collectives (identities) ---------------------------------------------
    Case("shard", [arg("x", "ab")], lambda x: mi.exp(mi.shard(x, {"a": "x"})), jnp.exp),
    Case("collectives", [arg("x", "ab")], lambda x: mi.all_gather(mi.all_slice(x, "a", "x"), "a", "x") * x,
         lambda x: x * x),
    # -- composites -------------------------------------------------------------------------------------
    Case("softmax", [arg("x", "ac")], lambda x: mi.softmax(x, "c"), lambda x: jax.nn.softmax(x, axis=1)),
    Case("log_softmax", [arg("x", "ac")], lambda x: mi.log_softmax(x, "c"), lambda x: jax.nn.log_softmax(x, axis=1)),
    Case("layer_norm", [arg("x", "ac"), arg("scale", "c"), arg("bias", "c")],
         lambda x, s, b: mi.layer_norm(x, "c", s, b),
         lambda x, s, b: (x - x.mean(1, keepdims=True)) / jnp.sqrt(x.var(1, keepdims=True) + 1e-6) * s + b),
    Case("cross_entropy", [arg("logits", "ac"), arg("ids", "a", "i4")], lambda z, i: mi.cross_entropy(z, i, "c"),
         lambda z, i: -jnp.sum(jax.nn.one_hot(i, 4, dtype=z.dtype) * jax.nn.log_softmax(z, axis=1), axis=1)),
    Case("gelu", [arg("x", "ab")], mi.gelu, lambda x: jax.nn.gelu(x, approximate=True)),
    Case("mean", [arg("x", "ac")], lambda x: mi.mean(x, over=["c"]), lambda x: x.mean(1)),
]


def make_input(rng, dims, kind):
    shape = tuple(d.size for d in dims)
    if kind == "n":
        return rng.standard_normal(shape)
    if kind == "p":
        return rng.uniform(0.5, 2.0, shape)
    if kind == "z":
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape)
    if kind == "f":
        return rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)
    assert kind.startswith("i")
    return rng.integers(0, int(kind[1:]), shape).astype(np.int32)


def is_float(kind: str) -> bool:
    return not kind.startswith("i")


def build(case: Case, rng):
    """The loss program and the cotangent weights it uses."""
    with mi.Program("f", MESH) as prog:
        tensors = [prog.argument(n, dims, dtype="f64" if is_float(k) else "i32") for n, dims, k in case.args]
        out = case.mtf(*tensors)
        weights = rng.standard_normal(out.shape)
        prog.result(mi.reduce_sum(out * mi.constant(weights, out.dims, dtype="f64")), name="loss")
    return prog, weights


def finite_differences(prog, inputs: dict, name: str, eps: float) -> np.ndarray:
    fn = entry_function(prog.module)
    names = list(inputs)

    def loss(values):
        return float(run_function(fn, [values[n] for n in names])[0])

    base = inputs[name]
    grad = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        plus, minus = base.copy(), base.copy()
        plus[idx] += eps
        minus[idx] -= eps
        grad[idx] = (loss({**inputs, name: plus}) - loss({**inputs, name: minus})) / (2 * eps)
    return grad


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradient_matches_jax_and_finite_differences(case):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = {n: make_input(rng, dims, k) for n, dims, k in case.args}
    prog, weights = build(case, rng)
    grad_prog = mi.value_and_grad(prog)
    float_names = [n for n, _, k in case.args if is_float(k)]
    assert grad_prog.result_names == ("value", *(f"grad_{n}" for n in float_names))
    value, *grads = mi.interpret(grad_prog, **inputs)

    argnums = tuple(i for i, (_, _, k) in enumerate(case.args) if is_float(k))
    with jax.enable_x64(True):
        loss = lambda *a: jnp.sum(case.jax(*a) * weights)  # noqa: E731
        jax_value, jax_grads = jax.jit(jax.value_and_grad(loss, argnums=argnums))(*inputs.values())
        jax_value, jax_grads = np.asarray(jax_value), [np.asarray(g) for g in jax_grads]
    np.testing.assert_allclose(value, jax_value, rtol=1e-9, atol=1e-12)
    for name, mine, theirs in zip(float_names, grads, jax_grads):
        assert mine.dtype == np.float64 and mine.shape == inputs[name].shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12, err_msg=f"grad_{name} vs jax")
        if case.fd:
            fd = finite_differences(prog, inputs, name, case.fd_eps)
            np.testing.assert_allclose(mine, fd, rtol=case.fd_tol, atol=case.fd_tol,
                                       err_msg=f"grad_{name} vs finite differences")


def test_every_differentiable_op_has_a_case():
    """Each op with a VJP rule is exercised above (collectives through all_slice/all_gather)."""
    from meshir.transforms.autodiff import vjp_classes

    names = {cls.OPERATION_NAME for cls in vjp_classes()}
    text = "\n".join(str(mi.value_and_grad(build(c, np.random.default_rng(0))[0]).module) for c in CASES)
    exercised = {name for name in names if f'"{name}"' in text}
    untested = names - exercised - {
        "mtf.scan", "mtf.while",  # loops: test_loops_grad.py
        "mtf.eq", "mtf.ne", "mtf.lt", "mtf.le", "mtf.ge",  # no gradient; gt is used by relu and select
        "mtf.random_uniform",  # a creation op like random_normal
        "mtf.optimization_barrier",  # made by mtf-autodiff itself (mi.remat: test_remat.py)
        "mtf.shard", "mtf.all_slice", "mtf.all_gather",  # erased from the gradient (identities)
        "mtf.all_reduce", "mtf.reduce_scatter", "mtf.all_to_all", "mtf.collective_permute",
        "mtf.as_partial",  # written by mtf-insert-collectives only, after autodiff
    }
    assert not untested, sorted(untested)


# -- non-differentiable points: JAX's conventions ------------------------------------------------------
def _grad_of(build_fn, dims, x):
    with mi.Program("g", MESH) as prog:
        xs = prog.argument("x", dims, dtype="f64")
        prog.result(build_fn(xs), name="loss")
    return mi.interpret(mi.grad(prog), x=x)


def _jax_grad(fn, x):
    with jax.enable_x64(True):
        return np.asarray(jax.jit(jax.grad(fn))(x))


TIES = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]])


def _tie(name, mtf_fn, jax_fn, x):
    return pytest.param(mtf_fn, jax_fn, x, id=name)


ZERO_ROWS = np.array([[0.0, -0.0, 1.0, -1.0]] * 2)
WEIGHTS_A = np.array([1.0, 2.0])


@pytest.mark.parametrize("mtf_fn, jax_fn, x", [
    _tie("reduce_max_ties_share_equally",
         lambda x: mi.reduce_sum(mi.reduce_max(x, over=["c"]) * mi.constant(WEIGHTS_A, D("a"), "f64")),
         lambda x: jnp.sum(x.max(1) * WEIGHTS_A), TIES),
    _tie("reduce_min_ties_share_equally", lambda x: mi.reduce_min(x), jnp.min,
         np.array([[0.5, 0.5, 1.0, 0.5], [2.0, 0.5, 3.0, 4.0]])),
    _tie("max_tie_half_each", lambda x: mi.reduce_sum(mi.maximum(x, 3.0)), lambda x: jnp.sum(jnp.maximum(x, 3.0)), TIES),
    _tie("min_tie_half_each", lambda x: mi.reduce_sum(mi.minimum(x, x * 1.0)),
         lambda x: jnp.sum(jnp.minimum(x, x * 1.0)), TIES),
    _tie("abs_at_0_is_1", lambda x: mi.reduce_sum(mi.abs(x)), lambda x: jnp.sum(jnp.abs(x)), ZERO_ROWS),
    _tie("relu_at_0_is_0", lambda x: mi.reduce_sum(mi.relu(x)), lambda x: jnp.sum(jax.nn.relu(x)), ZERO_ROWS),
    _tie("sqrt_at_0_is_inf", lambda x: mi.reduce_sum(mi.sqrt(x)), lambda x: jnp.sum(jnp.sqrt(x)),
         np.array([[0.0, 1.0, 4.0, 9.0]] * 2)),
    _tie("pow_at_base_0", lambda x: mi.reduce_sum(mi.pow(x, x + 1.0)), lambda x: jnp.sum(jnp.power(x, x + 1.0)),
         np.array([[0.0, 1.0, 2.0, 0.5]] * 2)),
])
def test_non_differentiable_points_follow_jax(mtf_fn, jax_fn, x):
    np.testing.assert_allclose(_grad_of(mtf_fn, D("ac"), x), _jax_grad(jax_fn, x), rtol=1e-12, atol=0)
