"""Reference interpreter: elementwise ops (broadcast by name), compare, select and cast."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

RNG = np.random.default_rng(0)

UNARY = {
    "neg": (lambda x: -x, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "sqrt": (np.sqrt, (0.1, 5)),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), (0.1, 5)),
    "tanh": (np.tanh, (-3, 3)),
    "logistic": (lambda x: 1.0 / (1.0 + np.exp(-x)), (-5, 5)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "sign": (np.sign, (-3, 3)),
    "floor": (np.floor, (-3, 3)),
    "relu": (lambda x: np.where(x > 0, x, 0.0), (-3, 3)),
    "stop_gradient": (lambda x: x, (-3, 3)),
    "erf": (scipy.special.erf, (-3, 3)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_f32(run_mtf_op, name):
    ref, (lo, hi) = UNARY[name]
    x = RNG.uniform(lo, hi, size=(2, 3)).astype(np.float32)
    x[0, 0] = 0.5  # sign/floor/relu see a non-negative value too
    got = run_mtf_op(f"mtf.{name}", ["b=2, d=3, f32"], "b=2, d=3, f32", x)
    assert got.dtype == np.float32 and got.shape == (2, 3)
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, ref", [
    ("neg", lambda x: -x),
    ("abs", np.abs),
    ("sign", np.sign),
    ("relu", lambda x: np.where(x > 0, x, 0)),
])
def test_unary_i32(run_mtf_op, name, ref):
    x = np.array([[-3, 0, 7], [2, -1, 5]], dtype=np.int32)
    got = run_mtf_op(f"mtf.{name}", ["b=2, d=3, i32"], "b=2, d=3, i32", x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref(x))


def test_unary_result_in_another_name_order(run_mtf_op):
    x = RNG.uniform(-1, 1, size=(2, 3)).astype(np.float32)
    got = run_mtf_op("mtf.neg", ["b=2, d=3, f32"], "d=3, b=2, f32", x)
    np.testing.assert_array_equal(got, -x.T)


BINARY_F = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "pow": np.power,
}


@pytest.mark.parametrize("name", sorted(BINARY_F))
def test_binary_f32(run_mtf_op, name):
    x = RNG.uniform(0.5, 2, size=(2, 3)).astype(np.float32)
    y = RNG.uniform(0.5, 2, size=(2, 3)).astype(np.float32)
    got = run_mtf_op(f"mtf.{name}", ["b=2, d=3, f32"] * 2, "b=2, d=3, f32", x, y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, BINARY_F[name](x, y), rtol=1e-6)


def test_binary_broadcasts_by_name_across_orders(run_mtf_op):
    """a[d, b] + c[c, b] -> result[b, c, d]: each operand moves into the result's order."""
    a = RNG.standard_normal((3, 2)).astype(np.float32)  # [d, b]
    c = RNG.standard_normal((4, 2)).astype(np.float32)  # [c, b]
    got = run_mtf_op("mtf.sub", ["d=3, b=2, f32", "c=4, b=2, f32"], "b=2, c=4, d=3, f32", a, c)
    expected = np.empty((2, 4, 3), np.float32)
    for i, j, k in itertools.product(range(2), range(4), range(3)):
        expected[i, j, k] = a[k, i] - c[j, i]
    np.testing.assert_array_equal(got, expected)


def test_binary_broadcasts_a_scalar(run_mtf_op):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    got = run_mtf_op("mtf.mul", ["f32", "b=2, d=3, f32"], "d=3, b=2, f32", np.float32(3.0), x)
    np.testing.assert_array_equal(got, 3.0 * x.T)


def test_binary_integer_semantics(run_mtf_op):
    x = np.array([7, -7, 7, -7, 5, -2**31, 3], dtype=np.int32)
    y = np.array([2, 2, -2, -2, 0, -1, 1], dtype=np.int32)
    t = ["n=7, i32"] * 2
    div = run_mtf_op("mtf.div", t, "n=7, i32", x, y)
    # Truncation toward zero like StableHLO; x/0 = -1 and INT_MIN/-1 = INT_MIN like XLA.
    np.testing.assert_array_equal(div, [3, -3, -3, 3, -1, -2**31, 3])
    for name, ref in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("max", np.maximum), ("min", np.minimum)]:
        np.testing.assert_array_equal(run_mtf_op(f"mtf.{name}", t, "n=7, i32", x, y), ref(x, y))


def test_integer_pow(run_mtf_op):
    base = np.array([2, 3, -2, 1, -1, -1, 5, 0], dtype=np.int64)
    exp_ = np.array([3, 0, 3, -4, -3, -2, -1, 2], dtype=np.int64)
    got = run_mtf_op("mtf.pow", ["n=8, i64"] * 2, "n=8, i64", base, exp_)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [8, 1, -8, 1, -1, 1, 0, 0])


def test_max_min_propagate_nan(run_mtf_op):
    x = np.array([np.nan, 1.0, 2.0], np.float32)
    y = np.array([0.0, np.nan, 1.0], np.float32)
    t = ["n=3, f32"] * 2
    np.testing.assert_array_equal(run_mtf_op("mtf.max", t, "n=3, f32", x, y), [np.nan, np.nan, 2.0])
    np.testing.assert_array_equal(run_mtf_op("mtf.min", t, "n=3, f32", x, y), [np.nan, np.nan, 1.0])


def test_max_min_on_booleans(run_mtf_op):
    x = np.array([True, True, False, False])
    y = np.array([True, False, True, False])
    t = ["n=4, i1"] * 2
    np.testing.assert_array_equal(run_mtf_op("mtf.max", t, "n=4, i1", x, y), x | y)
    np.testing.assert_array_equal(run_mtf_op("mtf.min", t, "n=4, i1", x, y), x & y)


@pytest.mark.parametrize("elem, dtype", [("bf16", ml_dtypes.bfloat16), ("f16", np.float16)])
def test_add_narrow_floats(run_mtf_op, elem, dtype):
    x = RNG.standard_normal((2, 3)).astype(dtype)
    y = RNG.standard_normal((3,)).astype(dtype)
    got = run_mtf_op("mtf.add", [f"b=2, d=3, {elem}", f"d=3, {elem}"], f"b=2, d=3, {elem}", x, y)
    assert got.dtype == np.dtype(dtype)
    expected = (x.astype(np.float32) + y.astype(np.float32)[None, :]).astype(dtype)
    np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32))


@pytest.mark.parametrize("elem, dtype", [("f32", np.float32), ("i32", np.int32), ("i64", np.int64)])
def test_add_dtypes(run_mtf_op, elem, dtype):
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    got = run_mtf_op("mtf.add", [f"b=2, d=3, {elem}"] * 2, f"b=2, d=3, {elem}", x, x)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, 2 * x)


COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("name", sorted(COMPARE))
@pytest.mark.parametrize("elem, dtype", [("f32", np.float32), ("i32", np.int32), ("bf16", ml_dtypes.bfloat16)])
def test_compare(run_mtf_op, name, elem, dtype):
    x = np.array([[1, 2, 3], [4, 5, 6]]).astype(dtype)  # [b, d]
    y = np.array([3, 2, 1]).astype(dtype)  # [d]
    got = run_mtf_op(f"mtf.{name}", [f"b=2, d=3, {elem}", f"d=3, {elem}"], "d=3, b=2, i1", x, y)
    assert got.dtype == np.bool_
    expected = COMPARE[name](x.astype(np.float64), y.astype(np.float64)[None, :]).T
    np.testing.assert_array_equal(got, expected)


def test_select_broadcasts_by_name(run_mtf_op):
    cond = np.array([True, False, True])  # [d]
    on_true = RNG.standard_normal((2, 3)).astype(np.float32)  # [b, d]
    on_false = np.float32(-1.0)  # scalar
    got = run_mtf_op("mtf.select", ["d=3, i1", "b=2, d=3, f32", "f32"], "d=3, b=2, f32", cond, on_true, on_false)
    expected = np.array([[on_true[b, d] if cond[d] else -1.0 for b in range(2)] for d in range(3)], np.float32)
    np.testing.assert_array_equal(got, expected)


def test_cast_float_to_int_truncates_toward_zero(run_mtf_op):
    x = np.array([2.7, -2.7, 0.5, -0.5, 3.0, np.nan, 1e10, -1e10], np.float32)
    got = run_mtf_op("mtf.cast", ["n=8, f32"], "n=8, i32", x)
    assert got.dtype == np.int32
    # NaN -> 0 and out-of-range values saturate (XLA's convert).
    np.testing.assert_array_equal(got, [2, -2, 0, 0, 3, 0, 2**31 - 1, -2**31])


def test_cast_to_and_from_bool(run_mtf_op):
    x = np.array([0.0, -0.0, 2.5, -1.0, np.nan], np.float32)
    np.testing.assert_array_equal(run_mtf_op("mtf.cast", ["n=5, f32"], "n=5, i1", x), [False, False, True, True, True])
    i = np.array([0, 3, -1], np.int32)
    np.testing.assert_array_equal(run_mtf_op("mtf.cast", ["n=3, i32"], "n=3, i1", i), [False, True, True])
    b = np.array([True, False, True])
    got = run_mtf_op("mtf.cast", ["n=3, i1"], "n=3, f32", b)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(run_mtf_op("mtf.cast", ["n=3, i1"], "n=3, i64", b), [1, 0, 1])


def test_cast_between_numbers(run_mtf_op):
    i = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    got = run_mtf_op("mtf.cast", ["b=2, d=3, i32"], "d=3, b=2, f32", i)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, i.T.astype(np.float32))
    x = np.array([1.0 + 2.0**-10, 3.14159], np.float32)
    got = run_mtf_op("mtf.cast", ["n=2, f32"], "n=2, bf16", x)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), [1.0, 3.140625])  # round to nearest even


# -- property: broadcasting by name, any shapes and orders ---------------------------------
SIZES = {"a": 2, "b": 3, "c": 1, "d": 4}


@st.composite
def named_operands(draw):
    names = list(SIZES)
    lhs = draw(st.permutations(names))[: draw(st.integers(0, 4))]
    rhs = draw(st.permutations(names))[: draw(st.integers(0, 4))]
    union = sorted(set(lhs) | set(rhs))
    result = draw(st.permutations(union))
    op = draw(st.sampled_from(["add", "sub", "mul", "max"]))
    return list(lhs), list(rhs), list(result), op


def _spec(names, elem="f32"):
    return ", ".join([f"{n}={SIZES[n]}" for n in names] + [elem])


@settings(max_examples=30, deadline=None)
@given(named_operands())
def test_property_broadcast_by_name(run_mtf_op, case):
    lhs, rhs, result, op = case
    rng = np.random.default_rng(len(lhs) * 7 + len(rhs))
    x = rng.standard_normal([SIZES[n] for n in lhs]).astype(np.float32)
    y = rng.standard_normal([SIZES[n] for n in rhs]).astype(np.float32)
    got = run_mtf_op(f"mtf.{op}", [_spec(lhs), _spec(rhs)], _spec(result), x, y)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum}[op]
    expected = np.empty([SIZES[n] for n in result], np.float32)
    for index in np.ndindex(*expected.shape):
        at = dict(zip(result, index))
        expected[index] = fn(x[tuple(at[n] for n in lhs)], y[tuple(at[n] for n in rhs)])
    np.testing.assert_array_equal(got, expected)
