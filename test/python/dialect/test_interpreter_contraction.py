"""Reference interpreter: mtf.einsum and the reductions."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

RNG = np.random.default_rng(1)


def test_einsum_one_operand_sums_and_reorders(run_mtf_op):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)  # [a, b, c]
    got = run_mtf_op("mtf.einsum", ["a=2, b=3, c=4, f32"], "c=4, a=2, f32", x)
    np.testing.assert_allclose(got, x.sum(axis=1).T, rtol=1e-6)


def test_einsum_two_operands_matmul_in_odd_orders(run_mtf_op):
    x = RNG.standard_normal((4, 2)).astype(np.float32)  # [k, m]
    w = RNG.standard_normal((3, 4)).astype(np.float32)  # [n, k]
    got = run_mtf_op("mtf.einsum", ["k=4, m=2, f32", "n=3, k=4, f32"], "n=3, m=2, f32", x, w)
    np.testing.assert_allclose(got, (x.T @ w.T).T, rtol=1e-5, atol=1e-5)


def test_einsum_outer_product(run_mtf_op):
    x = RNG.standard_normal(2).astype(np.float32)
    y = RNG.standard_normal(3).astype(np.float32)
    got = run_mtf_op("mtf.einsum", ["a=2, f32", "b=3, f32"], "b=3, a=2, f32", x, y)
    np.testing.assert_allclose(got, np.outer(y, x), rtol=1e-6)


def test_einsum_three_operands(run_mtf_op):
    x = RNG.standard_normal((2, 3)).astype(np.float32)  # [b, d]
    w1 = RNG.standard_normal((3, 4)).astype(np.float32)  # [d, f]
    w2 = RNG.standard_normal((4, 3)).astype(np.float32)  # [f, e]
    types = ["b=2, d=3, f32", "d=3, f=4, f32", "f=4, e=3, f32"]
    got = run_mtf_op("mtf.einsum", types, "e=3, b=2, f32", x, w1, w2)
    np.testing.assert_allclose(got, (x @ w1 @ w2).T, rtol=1e-5, atol=1e-5)


def test_einsum_full_contraction_to_scalar(run_mtf_op):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    y = RNG.standard_normal((3, 2)).astype(np.float32)
    got = run_mtf_op("mtf.einsum", ["a=2, b=3, f32", "b=3, a=2, f32"], "f32", x, y)
    assert got.shape == () and got.dtype == np.float32
    np.testing.assert_allclose(got, np.sum(x * y.T), rtol=1e-5, atol=1e-5)


def test_einsum_integers(run_mtf_op):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.arange(3, dtype=np.int32) - 1
    got = run_mtf_op("mtf.einsum", ["a=2, b=3, i32", "b=3, i32"], "a=2, i32", x, y)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, x @ y)


@pytest.mark.parametrize("elem, dtype", [("bf16", ml_dtypes.bfloat16), ("f16", np.float16)])
def test_einsum_narrow_floats_accumulate_in_f32(run_mtf_op, elem, dtype):
    # A sum of 4096 ones: a bf16 (f16) accumulator stalls at 256 (2048); float32 reaches 4096.
    x = np.ones((4096,), dtype=dtype)
    got = run_mtf_op("mtf.einsum", [f"k=4096, {elem}", f"k=4096, {elem}"], elem, x, x)
    assert got.dtype == np.dtype(dtype)
    assert float(got) == 4096.0
    a = RNG.standard_normal((2, 8)).astype(dtype)
    b = RNG.standard_normal((8, 3)).astype(dtype)
    got = run_mtf_op("mtf.einsum", [f"m=2, k=8, {elem}", f"k=8, n=3, {elem}"], f"m=2, n=3, {elem}", a, b)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32), rtol=1e-2)


REDUCE = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min}


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_one_name(run_mtf_op, name):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)  # [a, b, c]
    got = run_mtf_op(f"mtf.{name}", ["a=2, b=3, c=4, f32"], "c=4, a=2, f32", x)
    np.testing.assert_allclose(got, REDUCE[name](x, axis=1).T, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_two_names_and_to_scalar(run_mtf_op, name):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    got = run_mtf_op(f"mtf.{name}", ["a=2, b=3, c=4, f32"], "b=3, f32", x)
    np.testing.assert_allclose(got, REDUCE[name](x, axis=(0, 2)), rtol=1e-5, atol=1e-5)
    got = run_mtf_op(f"mtf.{name}", ["a=2, b=3, c=4, f32"], "f32", x)
    assert got.shape == ()
    np.testing.assert_allclose(got, REDUCE[name](x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_integers(run_mtf_op, name):
    x = np.array([[3, -1, 4], [1, -5, 9]], np.int32)
    got = run_mtf_op(f"mtf.{name}", ["a=2, b=3, i32"], "b=3, i32", x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, REDUCE[name](x, axis=0))


def test_reduce_sum_bf16(run_mtf_op):
    x = np.ones((2, 1024), dtype=ml_dtypes.bfloat16)  # a bf16 accumulator would stall at 256
    got = run_mtf_op("mtf.reduce_sum", ["a=2, k=1024, bf16"], "a=2, bf16", x)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), [1024.0, 1024.0])


def test_reduce_max_propagates_nan(run_mtf_op):
    x = np.array([[1.0, np.nan], [2.0, 3.0]], np.float32)
    got = run_mtf_op("mtf.reduce_max", ["a=2, b=2, f32"], "a=2, f32", x)
    np.testing.assert_array_equal(got, [np.nan, 3.0])


# -- property: einsum over random name subsets ----------------------------------------------
SIZES = {"a": 2, "b": 3, "c": 1, "d": 4, "e": 2}


@st.composite
def einsum_cases(draw):
    names = list(SIZES)
    operands = [
        draw(st.permutations(names))[: draw(st.integers(0, 3))] for _ in range(draw(st.integers(1, 3)))
    ]
    union = sorted({n for o in operands for n in o})
    result = draw(st.permutations(union))[: draw(st.integers(0, len(union)))]
    return [list(o) for o in operands], list(result)


def _spec(names):
    return ", ".join([f"{n}={SIZES[n]}" for n in names] + ["f32"])


@settings(max_examples=30, deadline=None)
@given(einsum_cases())
def test_property_einsum_matches_numpy(run_mtf_op, case):
    operands, result = case
    rng = np.random.default_rng(len(operands))
    arrays = [rng.standard_normal([SIZES[n] for n in o]).astype(np.float32) for o in operands]
    got = run_mtf_op("mtf.einsum", [_spec(o) for o in operands], _spec(result), *arrays)
    subscripts = ",".join("".join(o) for o in operands) + "->" + "".join(result)
    expected = np.einsum(subscripts, *[a.astype(np.float64) for a in arrays])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
