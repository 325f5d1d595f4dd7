"""Reference interpreter: constant, iota, random_uniform and random_normal."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from meshir.dialect.interpreter import interpret
from meshir.dialect.ops import ConstantOp


def _constant(mtf_module, value: str, result: str):
    text = (
        f"func.func @f() -> !mtf.tensor<{result}> {{\n"
        f'  %r = "mtf.constant"() {{value = {value}}} : () -> !mtf.tensor<{result}>\n'
        f"  func.return %r : !mtf.tensor<{result}>\n}}\n"
    )
    return mtf_module(text)


def _constant_op(module):
    fn = [op for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"][0]
    return next(op for op in fn.regions[0].blocks[0].operations if isinstance(op, ConstantOp))


@pytest.mark.parametrize("value, result, expected", [
    ("1.5 : f32", "a=2, b=3, f32", np.full((2, 3), 1.5, np.float32)),
    ("-4 : i32", "a=2, i32", np.array([-4, -4], np.int32)),
    ("7 : i64", "a=3, i64", np.array([7, 7, 7], np.int64)),
    ("true", "a=2, i1", np.array([True, True])),
    ("2.5 : f32", "f32", np.array(2.5, np.float32)),
    ("dense<2.0> : tensor<f32>", "a=2, b=2, f32", np.full((2, 2), 2.0, np.float32)),
    ("dense<3> : tensor<2x3xi32>", "a=2, b=3, i32", np.full((2, 3), 3, np.int32)),
    ("dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>", "a=2, b=3, f32",
     np.array([[1, 2, 3], [4, 5, 6]], np.float32)),
    ("dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>", "a=2, b=3, i64", np.arange(1, 7).reshape(2, 3)),
    ("dense<[true, false]> : tensor<2xi1>", "a=2, i1", np.array([True, False])),
    ("dense<[1.0, -2.5, 0.375]> : tensor<3xf16>", "a=3, f16", np.array([1.0, -2.5, 0.375], np.float16)),
])
def test_constant_values(mtf_module, value, result, expected):
    module = _constant(mtf_module, value, result)
    got = interpret(module)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(_constant_op(module).values(), expected)


def test_constant_bf16_dense(mtf_module):
    got = interpret(_constant(mtf_module, "dense<[[1.0, 2.5], [-3.0, 0x7F80]]> : tensor<2x2xbf16>", "a=2, b=2, bf16"))
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), [[1.0, 2.5], [-3.0, np.inf]])


def test_constant_bf16_large_dense_printed_as_hex(mtf_module):
    values = ", ".join(f"{float(i)}" for i in range(200))
    got = interpret(_constant(mtf_module, f"dense<[{values}]> : tensor<200xbf16>", "a=200, bf16"))
    np.testing.assert_array_equal(got.astype(np.float32), np.arange(200, dtype=np.float32))


@pytest.mark.parametrize("elem, dtype", [("i32", np.int32), ("f32", np.float32), ("bf16", ml_dtypes.bfloat16)])
def test_iota_along_each_dim(run_mtf_op, elem, dtype):
    for dim, expected in [("a", np.array([[0, 0, 0], [1, 1, 1]])), ("b", np.array([[0, 1, 2], [0, 1, 2]]))]:
        got = run_mtf_op("mtf.iota", [], f"a=2, b=3, {elem}", attrs=f'dim = "{dim}"')
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.astype(np.float64), expected)


def _random(run_mtf_op, op, result, **attrs):
    text = ", ".join(f"{k} = {v}" for k, v in attrs.items())
    return run_mtf_op(f"mtf.{op}", [], result, attrs=text)


@pytest.mark.parametrize("op", ["random_uniform", "random_normal"])
def test_random_is_the_same_under_every_layout(run_mtf_op, op):
    layouts = ["a=4, b=8, f32", "a=4@x, b=8, f32", "a=4@x, b=8@y, f32", "a=4@(x,y), b=8@(), f32"]
    results = [_random(run_mtf_op, op, t, seed=5) for t in layouts]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


@pytest.mark.parametrize("op", ["random_uniform", "random_normal"])
def test_random_seeds_differ(run_mtf_op, op):
    x = _random(run_mtf_op, op, "a=64, f32", seed=1)
    y = _random(run_mtf_op, op, "a=64, f32", seed=2)
    assert np.mean(x == y) < 0.05
    np.testing.assert_array_equal(x, _random(run_mtf_op, op, "a=64, f32", seed=1))


def test_random_uniform_range_and_moments(run_mtf_op):
    x = _random(run_mtf_op, "random_uniform", "a=100, b=100, f32", seed=3, minval=-2.0, maxval=3.0)
    assert x.dtype == np.float32
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.05
    assert abs(x.std() - 5 / np.sqrt(12)) < 0.05
    default = _random(run_mtf_op, "random_uniform", "a=10000, f32", seed=3)
    assert default.min() >= 0.0 and default.max() < 1.0


def test_random_normal_moments(run_mtf_op):
    x = _random(run_mtf_op, "random_normal", "a=100, b=100, f64", seed=4, mean=1.5, stddev=2.0)
    assert x.dtype == np.float64
    assert abs(x.mean() - 1.5) < 0.06
    assert abs(x.std() - 2.0) < 0.06
    bf = _random(run_mtf_op, "random_normal", "a=10000, bf16", seed=4)
    assert bf.dtype == np.dtype(ml_dtypes.bfloat16)
    assert abs(bf.astype(np.float32).mean()) < 0.05 and abs(bf.astype(np.float32).std() - 1) < 0.05


def test_random_values_are_a_function_of_the_global_index(run_mtf_op):
    """A [2, 3] tensor holds the first 6 numbers of a [6] one: the index is row-major global."""
    flat = _random(run_mtf_op, "random_uniform", "n=6, f32", seed=9)
    shaped = _random(run_mtf_op, "random_uniform", "a=2@x, b=3, f32", seed=9)
    np.testing.assert_array_equal(shaped.ravel(), flat)


@pytest.mark.parametrize("elem", ["bf16", "f16", "f32", "f64"])
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-1.0, 1.0), (0.1, 0.3)])
def test_random_uniform_stays_below_maxval_in_every_precision(run_mtf_op, elem, bounds):
    """Narrow types must not round up to maxval: only the type's precision bits are drawn."""
    lo, hi = bounds
    x = _random(run_mtf_op, "random_uniform", f"a=20000, {elem}", seed=11, minval=lo, maxval=hi)
    lo_t, hi_t = np.array(lo, dtype=x.dtype), np.array(hi, dtype=x.dtype)  # the bounds in that type
    assert (x >= lo_t).all() and (x < hi_t).all()
    assert len(np.unique(x)) > 1


def test_integer_constant_from_a_non_integral_number_is_rejected(mtf_module):
    from meshir.dialect import verify_module

    module = mtf_module('func.func @f() -> !mtf.tensor<a=2, i32> {\n'
                        '  %0 = "mtf.constant"() {value = 2.7 : f32} : () -> !mtf.tensor<a=2, i32>\n'
                        '  return %0 : !mtf.tensor<a=2, i32>\n}')
    (diag,) = verify_module(module)
    assert "value 2.7" in diag.message and "not an integer" in diag.message
