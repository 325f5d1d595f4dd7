"""Properties of `mtf-propagate-sharding` on random programs (hypothesis):

- afterwards every dim of every value has a layout and the module verifies;
- the program computes the same numbers (reference interpreter before and after);
- the output is deterministic and propagation is idempotent;
- user statements survive: written layouts are never changed.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import meshir as mi
from meshir.dialect import TensorType
from meshir.dialect.signature import entry_function, signature

MESHES = [{"x": 2}, {"x": 2, "y": 2}, {"x": 4, "y": 2}, {"x": 2, "y": 4}]
POOL = {"a": 4, "b": 8, "c": 6, "d": 12, "e": 2, "f": 16}


def legal_layout(draw, dims, mesh, taken=()):
    """A random legal layout for some of `dims`: distinct axes that divide their sizes."""
    free_axes = [a for a in mesh if a not in taken]
    layout = {}
    for d in dims:
        if not free_axes or not draw(st.booleans()):
            continue
        axis = draw(st.sampled_from(free_axes))
        if d.size % mesh[axis] == 0:
            layout[d.name] = axis
            free_axes.remove(axis)
    return layout


@st.composite
def programs(draw):
    mesh = draw(st.sampled_from(MESHES))
    rule_names = draw(st.lists(st.sampled_from(sorted(POOL)), unique=True, max_size=len(mesh)))
    rules = {}
    for name, axis in zip(rule_names, mesh):
        if POOL[name] % mesh[axis] == 0:
            rules[name] = axis
    prog = mi.Program("random", mi.Mesh(mesh), layout=rules or None)
    inputs, fresh = {}, iter(f"n{i}" for i in range(100))
    with prog:
        values = []
        for i in range(draw(st.integers(1, 3))):
            names = draw(st.lists(st.sampled_from(sorted(POOL)), min_size=1, max_size=3, unique=True))
            dims = [mi.Dim(n, POOL[n]) for n in names]
            layout = legal_layout(draw, dims, mesh) if draw(st.booleans()) else None
            values.append(prog.argument(f"arg{i}", dims, layout=layout))
            inputs[f"arg{i}"] = np.random.default_rng(i).standard_normal([d.size for d in dims]).astype(np.float32)
        sharded = set()
        for _ in range(draw(st.integers(1, 8))):
            x = draw(st.sampled_from(values))
            kind = draw(st.sampled_from(["unary", "binary", "einsum", "reduce", "transpose", "reshape", "slice", "shard"]))
            if kind == "unary":
                y = mi.tanh(x)
            elif kind == "binary":
                other = draw(st.sampled_from(values))
                if any(x.type.size(n) != other.type.size(n) for n in set(x.names) & set(other.names)):
                    continue
                y = x * other + x
            elif kind == "einsum":
                other = draw(st.sampled_from(values))
                if any(x.type.size(n) != other.type.size(n) for n in set(x.names) & set(other.names)):
                    continue
                union = list(dict.fromkeys(x.names + other.names))
                if not union:
                    continue
                out = draw(st.lists(st.sampled_from(union), unique=True, max_size=3))
                y = mi.einsum(x, other, output=out)
            elif kind == "reduce":
                if not x.type.rank:
                    continue
                y = mi.reduce_sum(x, over=draw(st.lists(st.sampled_from(list(x.names)), unique=True, max_size=2)))
            elif kind == "transpose":
                y = mi.transpose(x, list(draw(st.permutations(list(x.names)))))
            elif kind == "reshape":
                if x.type.rank >= 2 and draw(st.booleans()):
                    i = draw(st.integers(0, x.type.rank - 2))
                    merged = x.dims[:i] + [mi.Dim(next(fresh), x.shape[i] * x.shape[i + 1])] + x.dims[i + 2:]
                    y = mi.reshape(x, merged)
                else:
                    i = draw(st.integers(0, x.type.rank - 1)) if x.type.rank else None
                    if i is None or x.shape[i] % 2:
                        continue
                    split = [mi.Dim(next(fresh), 2), mi.Dim(next(fresh), x.shape[i] // 2)]
                    y = mi.reshape(x, x.dims[:i] + split + x.dims[i + 1:])
            elif kind == "slice":
                if not x.type.rank:
                    continue
                d = draw(st.sampled_from(x.dims))
                # A rule must divide every dim of its name (an error otherwise, tested below).
                length = d.size if d.name in rules else max(d.size // 2, 1)
                y = mi.slice(x, d.name, 0, length)
            else:
                if id(x) in sharded or not x.type.rank:
                    continue
                layout = legal_layout(draw, x.dims, mesh)
                y = mi.shard(x, layout)
                sharded.add(id(x))
            values.append(y)
        prog.result(values[-1], name="out")
        if len(values) > 2:
            prog.result(values[len(values) // 2], name="mid")
    return prog, inputs


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
        mi.propagate(prog, layout=layout)


def test_conflicting_shards_on_one_value_are_an_error():
    with mi.Program("p", mi.Mesh({"x": 2, "y": 2})) as prog:
        x = prog.argument("x", [mi.Dim("batch", 8)])
        prog.result(mi.shard(x, {"batch": "x"}) + mi.shard(x, {"batch": "y"}))
    with pytest.raises(mi.MeshIRError, match=r"conflicting mtf.shard constraints on %arg0: 'batch' is @x at .*:\d+:\d+ and @y here"):
        mi.propagate(prog)
