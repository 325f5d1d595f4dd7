"""Reference interpreter: binding and checking arguments, results, entry points and errors."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from meshir.dialect import MeshIRError, get_context
from meshir.dialect.interpreter import interpret, run_function
from meshir.dialect.signature import entry_function
from meshir._jax_private import ir

FFN = """
func.func @ffn(%x: !mtf.tensor<batch=8@x, d_model=16, f32> {mtf.name = "x"},
               %w: !mtf.tensor<d_model=16, d_ff=4@y, f32> {mtf.name = "w"})
    -> (!mtf.tensor<batch=8@x, d_ff=4@y, f32>, !mtf.tensor<batch=8@x, f32>) attributes {mtf.mesh = @mesh} {
  %h = "mtf.einsum"(%x, %w) : (!mtf.tensor<batch=8@x, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=4@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=4@y, f32>
  %r = "mtf.relu"(%h) : (!mtf.tensor<batch=8@x, d_ff=4@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=4@y, f32>
  %s = "mtf.reduce_sum"(%r) : (!mtf.tensor<batch=8@x, d_ff=4@y, f32>) -> !mtf.tensor<batch=8@x, f32, partial@y>
  %t = "mtf.all_reduce"(%s) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<batch=8@x, f32, partial@y>) -> !mtf.tensor<batch=8@x, f32>
  func.return %r, %t : !mtf.tensor<batch=8@x, d_ff=4@y, f32>, !mtf.tensor<batch=8@x, f32>
}
"""

RNG = np.random.default_rng(4)
X = RNG.standard_normal((8, 16)).astype(np.float32)
W = RNG.standard_normal((16, 4)).astype(np.float32)
RELU = np.maximum(X @ W, 0)


@pytest.fixture(scope="module")
def ffn(mtf_module):
    return mtf_module(FFN)


def _check_ffn(result):
    assert isinstance(result, tuple) and len(result) == 2
    np.testing.assert_allclose(result[0], RELU, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(result[1], RELU.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_arguments_by_name_position_or_both(ffn):
    _check_ffn(interpret(ffn, x=X, w=W))
    _check_ffn(interpret(ffn, w=W, x=X))
    _check_ffn(interpret(ffn, X, W))
    _check_ffn(interpret(ffn, X, w=W))


def test_one_result_is_an_array_and_unnamed_arguments_are_arg_i(mtf_module):
    module = mtf_module("""
func.func @f(%a: !mtf.tensor<n=3, f32>, %b: !mtf.tensor<n=3, f32>) -> !mtf.tensor<n=3, f32> {
  %r = "mtf.sub"(%a, %b) : (!mtf.tensor<n=3, f32>, !mtf.tensor<n=3, f32>) -> !mtf.tensor<n=3, f32>
  func.return %r : !mtf.tensor<n=3, f32>
}
""")
    got = interpret(module, arg1=[1.0, 1.0, 1.0], arg0=[3.0, 4.0, 5.0])
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_array_equal(got, [2.0, 3.0, 4.0])
    got.fill(0.0)  # results are plain, writable arrays


def test_program_objects_and_ir_modules(ffn):
    class Program:
        module = ffn

    _check_ffn(interpret(Program(), x=X, w=W))
    with get_context():
        module = ir.Module.parse("sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n" + FFN)
    _check_ffn(interpret(module, x=X, w=W))


def test_choosing_the_function_and_calls(mtf_module):
    module = mtf_module("""
func.func private @double(%a: !mtf.tensor<n=2, i32>) -> !mtf.tensor<n=2, i32> {
  %r = "mtf.add"(%a, %a) : (!mtf.tensor<n=2, i32>, !mtf.tensor<n=2, i32>) -> !mtf.tensor<n=2, i32>
  func.return %r : !mtf.tensor<n=2, i32>
}
func.func @quad(%a: !mtf.tensor<n=2, i32>) -> !mtf.tensor<n=2, i32> {
  %d = func.call @double(%a) : (!mtf.tensor<n=2, i32>) -> !mtf.tensor<n=2, i32>
  %r = func.call @double(%d) : (!mtf.tensor<n=2, i32>) -> !mtf.tensor<n=2, i32>
  func.return %r : !mtf.tensor<n=2, i32>
}
""")
    np.testing.assert_array_equal(interpret(module, [1, 2]), [4, 8])  # the only public function
    np.testing.assert_array_equal(interpret(module, [1, 2], function="double"), [2, 4])
    with pytest.raises(MeshIRError, match=r"no function @triple .*@double, @quad"):
        interpret(module, [1, 2], function="triple")


def test_run_function_directly(ffn):
    relu, total = run_function(entry_function(ffn), [X, W])
    np.testing.assert_allclose(relu, RELU, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(total, RELU.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_inputs_are_not_modified_and_results_do_not_alias(ffn, mtf_module):
    x, w = X.copy(), W.copy()
    interpret(ffn, x=x, w=w)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(w, W)
    module = mtf_module("""
func.func @f(%a: !mtf.tensor<n=2, f32>) -> (!mtf.tensor<n=2, f32>, !mtf.tensor<n=2, f32>) {
  %s = "mtf.shard"(%a) : (!mtf.tensor<n=2, f32>) -> !mtf.tensor<n=2, f32>
  func.return %a, %s : !mtf.tensor<n=2, f32>, !mtf.tensor<n=2, f32>
}
""")
    a = np.array([1.0, 2.0], np.float32)
    r0, r1 = interpret(module, a)
    r0 += 10
    r1 += 20
    np.testing.assert_array_equal(a, [1.0, 2.0])
    np.testing.assert_array_equal(r0, [11.0, 12.0])
    np.testing.assert_array_equal(r1, [21.0, 22.0])


def test_jax_arrays_are_accepted(ffn, run_mtf_op):
    import jax.numpy as jnp

    _check_ffn(interpret(ffn, x=jnp.asarray(X), w=jnp.asarray(W)))
    x = jnp.asarray([1.5, -2.0], dtype=jnp.bfloat16)
    got = run_mtf_op("mtf.neg", ["n=2, bf16"], "n=2, bf16", x)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), [-1.5, 2.0])


def test_safe_conversions_are_accepted(ffn, run_mtf_op):
    _check_ffn(interpret(ffn, x=X.astype(np.float64), w=W.astype(np.float64)))  # f64 -> f32
    got = run_mtf_op("mtf.neg", ["n=3, f32"], "n=3, f32", [1, 2, 3])  # int -> float
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [-1, -2, -3])
    got = run_mtf_op("mtf.neg", ["n=2, i32"], "n=2, i32", np.array([5, -6], np.int64))  # fits in i32
    np.testing.assert_array_equal(got, [-5, 6])
    got = run_mtf_op("mtf.stop_gradient", ["n=2, i1"], "n=2, i1", [True, False])
    np.testing.assert_array_equal(got, [True, False])
    got = run_mtf_op("mtf.neg", ["f32"], "f32", 2.5)  # a Python scalar for a scalar argument
    assert got.shape == () and got == -2.5


# -- errors ---------------------------------------------------------------------------------
def test_unknown_argument_name(ffn):
    with pytest.raises(MeshIRError, match=r"@ffn has no argument 'y' \(arguments: x, w\)"):
        interpret(ffn, x=X, y=W)


def test_missing_argument(ffn):
    with pytest.raises(MeshIRError, match=r"@ffn is missing argument 'w' \(arguments: x, w\)"):
        interpret(ffn, x=X)
    with pytest.raises(MeshIRError, match=r"missing arguments 'x', 'w'"):
        interpret(ffn)


def test_argument_given_twice(ffn):
    with pytest.raises(MeshIRError, match=r"argument 'x' of @ffn is given twice"):
        interpret(ffn, X, W, x=X)


def test_too_many_positional_arguments(ffn):
    with pytest.raises(MeshIRError, match=r"@ffn takes 2 arguments \(x, w\), got 3 positional"):
        interpret(ffn, X, W, W)


def test_wrong_shape(ffn):
    with pytest.raises(MeshIRError, match=r"argument 'x' of @ffn: expected global shape \[batch=8, d_model=16\], got \(8, 15\)"):
        interpret(ffn, x=X[:, :15], w=W)
    with pytest.raises(MeshIRError, match=r"argument 'w' .*expected global shape \[d_model=16, d_ff=4\], got \(4, 16\)"):
        interpret(ffn, x=X, w=W.T)


@pytest.mark.parametrize("elem, value, got", [
    ("i32", np.array([1.0, 2.0]), "float64"),  # float -> int refused
    ("i1", np.array([1, 0]), "int64"),  # only bools go into i1
    ("i1", np.array([1.0, 0.0], np.float32), "float32"),
    ("f32", np.array(["a", "b"]), "str"),
    ("f32", np.array([1 + 2j, 3j]), "complex128"),
])
def test_wrong_dtype(run_mtf_op, elem, value, got):
    with pytest.raises(MeshIRError, match=rf"argument 'a0' of @f: expected element type {elem} \(.*\), got {got}"):
        run_mtf_op("mtf.stop_gradient", [f"n=2, {elem}"], f"n=2, {elem}", value)


def test_integer_values_must_fit(run_mtf_op):
    with pytest.raises(MeshIRError, match=r"argument 'a0' of @f: values in \[0, 4294967296\] do not fit element type i32"):
        run_mtf_op("mtf.neg", ["n=2, i32"], "n=2, i32", np.array([0, 2**32], np.int64))


def test_module_is_verified_first(mtf_module):
    module = mtf_module("""
func.func @f(%a: !mtf.tensor<n=2, f32>) -> !mtf.tensor<m=2, f32> {
  %r = "mtf.einsum"(%a) : (!mtf.tensor<n=2, f32>) -> !mtf.tensor<m=2, f32>
  func.return %r : !mtf.tensor<m=2, f32>
}
""")
    with pytest.raises(MeshIRError, match=r"test.mlir:4:8: error: 'mtf.einsum' op result names \[m\] appear in no operand"):
        interpret(module, np.zeros(2, np.float32))


def test_unknown_operation_is_located(mtf_module):
    module = mtf_module("""
func.func @f(%a: !mtf.tensor<n=2, f32>) -> !mtf.tensor<n=2, f32> {
  %r = "other.frobnicate"(%a) : (!mtf.tensor<n=2, f32>) -> !mtf.tensor<n=2, f32>
  func.return %r : !mtf.tensor<n=2, f32>
}
""")
    with pytest.raises(MeshIRError, match=r"test.mlir:4:8: error: the reference interpreter does not know operation 'other.frobnicate'") as info:
        interpret(module, np.zeros(2, np.float32))
    assert info.value.diagnostics and info.value.diagnostics[0].line == 4
