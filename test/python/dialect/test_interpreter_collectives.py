"""Reference interpreter: mtf.shard and every collective are the identity in global semantics."""
from __future__ import annotations

import numpy as np
import pytest

from meshir.dialect.interpreter import interpret

X = np.arange(16, dtype=np.float32).reshape(4, 4)

CASES = [
    ("mtf.shard", "b=4, d=4, f32", "b=4@x, d=4@y, f32", ""),
    ("mtf.all_reduce", "b=4, d=4, f32, partial@x", "b=4, d=4, f32", 'reduction = "sum", axes = ["x"]'),
    ("mtf.all_reduce", "b=4@y, d=4, f32, partial_max@x", "b=4@y, d=4, f32", 'reduction = "max", axes = ["x"]'),
    ("mtf.all_gather", "b=4@x, d=4, f32", "b=4, d=4, f32", 'dim = "b", axes = ["x"]'),
    ("mtf.reduce_scatter", "b=4, d=4, f32, partial@x", "b=4@x, d=4, f32", 'reduction = "sum", dim = "b", axes = ["x"]'),
    ("mtf.all_slice", "b=4, d=4, f32", "b=4, d=4@(x,y), f32", 'dim = "d", axes = ["x", "y"]'),
    ("mtf.all_to_all", "b=4@x, d=4, f32", "b=4, d=4@x, f32", 'src_dim = "b", dst_dim = "d", axes = ["x"]'),
    ("mtf.collective_permute", "b=4@x, d=4, f32", "b=4@y, d=4, f32", ""),
]


@pytest.mark.parametrize("op, operand, result, attrs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_identity(run_mtf_op, op, operand, result, attrs):
    got = run_mtf_op(op, [operand], result, X, attrs=attrs)
    np.testing.assert_array_equal(got, X)


def test_partial_value_passes_through(mtf_module):
    """A value typed `partial@x` means its global value; einsum and all_reduce keep it."""
    text = """
func.func @f(%a: !mtf.tensor<b=4@x, k=4@y, f32> {mtf.name = "a"}, %w: !mtf.tensor<k=4@y, d=2, f32> {mtf.name = "w"},
             %p: !mtf.tensor<b=4, d=2, f32, partial@y> {mtf.name = "p"})
    -> (!mtf.tensor<b=4@x, d=2, f32>, !mtf.tensor<b=4, d=2, f32, partial@y>) attributes {mtf.mesh = @mesh} {
  %s = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=4@x, k=4@y, f32>, !mtf.tensor<k=4@y, d=2, f32>) -> !mtf.tensor<b=4@x, d=2, f32, partial@y>
  %r = "mtf.all_reduce"(%s) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<b=4@x, d=2, f32, partial@y>) -> !mtf.tensor<b=4@x, d=2, f32>
  func.return %r, %p : !mtf.tensor<b=4@x, d=2, f32>, !mtf.tensor<b=4, d=2, f32, partial@y>
}
"""
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    w = np.ones((4, 2), np.float32)
    p = np.full((4, 2), 3.0, np.float32)
    r, p_out = interpret(mtf_module(text), a=a, w=w, p=p)
    np.testing.assert_array_equal(r, a @ w)
    np.testing.assert_array_equal(p_out, p)
