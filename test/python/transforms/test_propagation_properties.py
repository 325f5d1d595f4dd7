"""Properties of `mtf-propagate-sharding` on random programs (hypothesis):

- afterwards every dim of every value has a layout and the module verifies;
- the program computes the same numbers (reference interpreter before and after);
- the output is deterministic and propagation is idempotent;
- user statements survive: written layouts are never changed.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from random_programs import programs

import meshir as mi
from meshir.dialect import TensorType
from meshir.dialect.signature import entry_function, signature

def all_types(module):
    fn = entry_function(module)
    types = list(signature(fn).arg_types)
    for op in fn.regions[0].blocks[0].operations:
        types += [TensorType.from_mlir(r.type) for r in op.operation.results]
    return types


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(programs())
def test_every_dim_gets_a_layout_and_the_module_verifies(case):
    prog, _ = case
    module = mi.propagate(prog)
    assert not mi.verify_module(module)
    for t in all_types(module):
        assert all(d.axes is not None for d in t.dims), t


@SETTINGS
@given(programs())
def test_propagation_keeps_the_numbers(case):
    prog, inputs = case
    before = mi.interpret(prog, **inputs)
    after = mi.interpret(mi.propagate(prog), **inputs)
    for b, a in zip(before if isinstance(before, tuple) else (before,), after if isinstance(after, tuple) else (after,)):
        np.testing.assert_array_equal(a, b)


@SETTINGS
@given(programs())
def test_deterministic_and_idempotent(case):
    prog, _ = case
    once = str(mi.propagate(prog))
    assert str(mi.propagate(prog)) == once
    reparsed, diags = mi.parse_module(once)
    assert not diags
    assert str(mi.propagate(reparsed)) == once


@SETTINGS
@given(programs())
def test_written_layouts_are_never_changed(case):
    prog, _ = case
    written = signature(entry_function(prog.module)).arg_types
    after = signature(entry_function(mi.propagate(prog))).arg_types
    for w, a in zip(written, after):
        for d in w.dims:
            if d.axes is not None:
                assert a.dim(d.name).axes == d.axes


def test_propagate_leaves_the_program_untouched_and_takes_python_rules():
    b, m = mi.Dim("batch", 8), mi.Dim("d_model", 16)
    with mi.Program("p", mi.Mesh({"x": 4, "y": 2})) as prog:
        prog.result(mi.relu(prog.argument("x", [b, m])))
    before = str(prog.module)
    module = mi.propagate(prog, layout={"batch": "x", m: ("y",)})
    assert str(prog.module) == before
    assert "!mtf.tensor<batch=8@x, d_model=16@y, f32>" in str(module)
    table = mi.layout_table(module)
    assert "x (%arg0)  argument  batch=8@x d_model=16@y f32  (2, 8)" in table


@pytest.mark.parametrize(
    "layout, message",
    [
        ({"batch": "z"}, "layout rule for 'batch' names unknown mesh axis 'z'"),
        ({"batch": "x", "d_model": "x"}, "layout rules split both 'batch' and 'd_model'"),
        ({"d_model": ("x", "y")}, "layout rule d_model:\\(x,y\\) does not divide dimension 'd_model' of size 4"),
    ],
)
def test_bad_rules_are_clear_errors(layout, message):
    with mi.Program("p", mi.Mesh({"x": 4, "y": 2})) as prog:
        prog.result(mi.relu(prog.argument("x", [mi.Dim("batch", 8), mi.Dim("d_model", 4)])))
    with pytest.raises(mi.MeshIRError, match=message):
        mi.propagate(prog, layout=layout, strict=True)  # without strict an absent axis is a warning


def test_conflicting_shards_on_one_value_are_an_error():
    with mi.Program("p", mi.Mesh({"x": 2, "y": 2})) as prog:
        x = prog.argument("x", [mi.Dim("batch", 8)])
        prog.result(mi.shard(x, {"batch": "x"}) + mi.shard(x, {"batch": "y"}))
    with pytest.raises(mi.MeshIRError, match=r"conflicting mtf.shard constraints on %arg0: 'batch' is @x at .*:\d+:\d+ and @y here"):
        mi.propagate(prog)


@pytest.mark.parametrize("text, message", [
    ("b:x,", "ends with a comma"),
    ("b:(x,,y)", "axes of 'b' must be mesh axis names"),
    ("b:(1x)", "axes of 'b' must be mesh axis names"),
    ("b x", "expected 'dim:axis'"),
    ("b:x,b:y", "give 'b' twice"),
])
def test_malformed_rules_text(text, message):
    with pytest.raises(mi.MeshIRError, match=message):
        mi.LayoutRules.parse(text)


def test_rules_text_forms():
    rules = mi.LayoutRules.parse(" batch : x , d_ff:(x, y), d_model:() ")
    assert rules == {"batch": ("x",), "d_ff": ("x", "y"), "d_model": ()}
    assert mi.LayoutRules.parse(str(rules)) == rules
