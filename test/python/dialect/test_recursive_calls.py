"""A recursive call through the Python API (found by test/fuzz, issue 27): the interpreter,
mi.grad and mi.compile each refuse it with a MeshIRError at the call that closes the cycle,
never a RecursionError. meshir-opt's passes: test/transforms/recursive_calls.mlir."""
from __future__ import annotations

import numpy as np
import pytest

import meshir as mi

SELF = """func.func @f(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<f32> {
  %0 = func.call @f(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}
"""
MUTUAL = """func.func @f(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<f32> {
  %0 = func.call @g(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}
func.func private @g(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<f32> {
  %0 = func.call @f(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}
"""
CYCLES = {
    "self": (SELF, "r.mlir:2:8: error: 'func.call' op @f calls itself (@f -> @f): "),
    "mutual": (MUTUAL, "r.mlir:6:8: error: 'func.call' op @g calls @f, which leads back to @g (@f -> @g -> @f): "),
}
USES = {
    "interpret": (lambda m: mi.interpret(m, np.ones(8, np.float32)), "the interpreter does not run recursive calls"),
    "grad": (lambda m: mi.grad(m), "mtf-autodiff cannot differentiate recursive calls"),
    "compile": (lambda m: mi.compile(m, mesh={"x": 2}, layout={"b": "x"}), "mtf-inline cannot inline recursive calls"),
}


@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("cycle", CYCLES)
def test_a_recursive_call_is_an_error_at_the_call(cycle, use):
    text, where = CYCLES[cycle]
    run, consequence = USES[use]
    module, diags = mi.parse_module(text, "r.mlir")
    assert not diags
    with pytest.raises(mi.MeshIRError) as e:
        run(module)
    assert str(e.value).startswith(where + consequence)
