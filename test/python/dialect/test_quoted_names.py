"""Names that are not bare identifiers (found by test/fuzz, issue 27): a function such as
@"héllo wörld" and an `mtf.name` with escapes lower, compile and run like any other; a mesh
name MeshIR cannot use is an error at its `sdy.mesh` op only, not at a Python line."""
from __future__ import annotations

import numpy as np
import pytest

import meshir as mi

QUOTED = """sdy.mesh @mesh = <["x"=2]>
func.func @"héllo wörld"(%a: !mtf.tensor<b=8, f32> {mtf.name = "ä\\0Ax"}) -> (!mtf.tensor<b=8, f32> {mtf.name = "out"}) {
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return %1 : !mtf.tensor<b=8, f32>
}
"""


@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
def test_a_function_with_a_quoted_name_runs_and_equals_the_interpreter(mode):
    module, diags = mi.parse_module(QUOTED)
    assert not diags
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    exe = mi.compile(module, layout={"b": "x"}, mode=mode)
    assert exe.signature.function == "héllo wörld" and exe.signature.arg_names == ("ä\nx",)
    np.testing.assert_allclose(np.asarray(exe(x)), mi.interpret(module, x), rtol=1e-6)


def test_a_mesh_name_that_is_no_identifier_is_an_error_at_the_mesh_op_alone():
    module, diags = mi.parse_module('sdy.mesh @mesh = <["x"=2]>\nsdy.mesh @"mésh" = <["x"=2]>\n', "m.mlir")
    assert not diags
    [diag] = mi.verify_module(module)
    assert str(diag) == "m.mlir:2:1: error: 'sdy.mesh' op mesh name 'mésh' is not an identifier"
