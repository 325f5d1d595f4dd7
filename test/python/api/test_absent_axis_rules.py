"""Layout rules naming mesh axes the mesh lacks (issue 34): Mesh-TensorFlow's and T5's shared
rule sets name an `ensemble` axis most meshes lack, and Mesh-TensorFlow ignored such rules.
The Python API ignores them too, axis by axis, with one `mi.MeshIRWarning` at the user's line
naming each rule and the mesh's axes; `strict=True` keeps them errors (a typo). Other problems
with rules stay errors.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import meshir as mi

#: T5's default rules (mesh_tensorflow/transformer/gin/defaults.gin), on T5's TPU mesh
#: shape without ensemble parallelism (utils.tpu_mesh_shape): batch and model axes.
T5_RULES = "ensemble:ensemble,batch:batch,d_ff:model,heads:model,vocab:model,experts:batch"
MESH = mi.Mesh({"batch": 4, "model": 2})
AXES = '["batch"=4, "model"=2]'
B, M, F = mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 8)


@pytest.fixture(scope="module")
def ffn():
    with mi.Program("ffn", MESH) as prog:
        x = prog.argument("x", [B, M])
        w1 = prog.argument("w1", [M, F])
        w2 = prog.argument("w2", [F, M])
        prog.result(mi.einsum(mi.relu(mi.einsum(x, w1)), w2), name="y")
    return prog


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((8, 4)).astype(np.float32),
            "w1": rng.standard_normal((4, 8)).astype(np.float32),
            "w2": rng.standard_normal((8, 4)).astype(np.float32)}


def numpy_ffn(x, w1, w2):
    return np.maximum(x.astype(np.float64) @ w1, 0) @ w2


def split(sharding) -> tuple:
    """The sharding's PartitionSpec without trailing Nones (jax writes them or not)."""
    spec = tuple(sharding.spec)
    while spec and spec[-1] is None:
        spec = spec[:-1]
    return spec


def only_warning(record, line: int) -> str:
    """The one MeshIRWarning recorded, which points at `line` of this file; its text."""
    ours = [w for w in record if issubclass(w.category, mi.MeshIRWarning)]
    assert len(ours) == 1, [str(w.message) for w in ours]
    assert (ours[0].filename, ours[0].lineno) == (__file__, line), (ours[0].filename, ours[0].lineno)
    return str(ours[0].message)


def test_t5_rules_compile_with_one_warning_naming_the_ignored_rule(ffn, arrays):
    with pytest.warns(mi.MeshIRWarning) as record:
        line = inspect.currentframe().f_lineno + 1
        exe = mi.compile(ffn, layout=T5_RULES)
    message = only_warning(record, line)
    assert "ensemble:ensemble is ignored" in message and AXES in message and "strict=True" in message
    assert "batch:batch" not in message and "d_ff" not in message  # the rules the mesh can realise are not named
    assert split(exe.in_shardings.x) == ("batch",) and split(exe.in_shardings.w1) == (None, "model")
    np.testing.assert_allclose(np.asarray(exe(**arrays)), numpy_ffn(**arrays), rtol=1e-5, atol=1e-5)


def test_a_rule_with_an_absent_and_a_present_axis_keeps_the_present_one(ffn, arrays):
    with pytest.warns(mi.MeshIRWarning) as record:
        line = inspect.currentframe().f_lineno + 1
        exe = mi.compile(ffn, layout={"batch": "batch", "d_ff": ("model", "ensemble")})
    assert "d_ff:(model,ensemble) is applied as d_ff:model" in only_warning(record, line)
    assert split(exe.in_shardings.w1) == (None, "model")
    np.testing.assert_allclose(np.asarray(exe(**arrays)), numpy_ffn(**arrays), rtol=1e-5, atol=1e-5)


def test_program_layout_warns_once_at_the_program_and_not_again_at_compile(arrays):
    with pytest.warns(mi.MeshIRWarning) as record:
        line = inspect.currentframe().f_lineno + 1
        prog = mi.Program("t5", MESH, layout=T5_RULES)
    assert "ensemble:ensemble is ignored" in only_warning(record, line)
    with prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        prog.result(mi.einsum(mi.relu(mi.einsum(x, w1)), w2), name="y")
    assert "ensemble" not in str(prog.module)  # the attribute holds the rules the mesh realises
    with warnings.catch_warnings():
        warnings.simplefilter("error", mi.MeshIRWarning)
        exe = mi.compile(prog)
    assert split(exe.in_shardings.w2) == ("model",)
    np.testing.assert_allclose(np.asarray(exe(**arrays)), numpy_ffn(**arrays), rtol=1e-5, atol=1e-5)


def test_strict_keeps_the_error(ffn):
    calls = [
        lambda: mi.compile(ffn, layout=T5_RULES, strict=True),
        lambda: mi.Program("p", MESH, layout=T5_RULES, strict=True),
        lambda: mi.propagate(ffn, layout=T5_RULES, strict=True),
        lambda: mi.explain(ffn, layout=T5_RULES, strict=True, show=False),
    ]
    for call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("error", mi.MeshIRWarning)
            with pytest.raises(mi.MeshIRValueError) as info:
                call()
        message = str(info.value)
        assert message.startswith(f"{__file__}:{call.__code__.co_firstlineno}:"), message
        assert f"layout rule for 'ensemble' names unknown mesh axis 'ensemble' ({AXES})" in message
    with pytest.raises(mi.MeshIRValueError, match="'ensemble'"):
        mi.auto_layout(ffn, layout=T5_RULES, strict=True, time_limit=1.0, measure=0)


def test_a_typo_without_strict_warns(ffn):
    with pytest.warns(mi.MeshIRWarning) as record:
        line = inspect.currentframe().f_lineno + 1
        mi.propagate(ffn, layout={"batch": "btach"})
    message = only_warning(record, line)
    assert "mesh axis 'btach'" in message and "batch:btach is ignored" in message and AXES in message


def test_auto_layout_ignores_them_as_compile_does(ffn):
    with pytest.warns(mi.MeshIRWarning) as record:
        line = inspect.currentframe().f_lineno + 1
        choice = mi.auto_layout(ffn, layout=T5_RULES, time_limit=1.0, measure=0)
    assert "ensemble:ensemble is ignored" in only_warning(record, line)
    assert "ensemble" not in choice.rules and choice.rules["batch"] == ("batch",)


@pytest.mark.parametrize("call, fragment", [
    (lambda prog: mi.compile(prog, layout={"d_ff": ("model", "model", "ensemble")}),
     "layout rule for 'd_ff' names a mesh axis twice: (model,model,ensemble)"),
    (lambda prog: mi.Program("p", MESH, layout={"d_ff": ("model", "model")}), "names a mesh axis twice"),
    (lambda prog: mi.Program("p", layout={"d_ff": "model"}), "names unknown mesh axis 'model' (no mesh)"),
    (lambda prog: mi.compile(prog, layout="d_ff:model;"), "ends with a semicolon"),
    (lambda prog: mi.compile(prog, strict="yes"), "strict must be True or False, got str 'yes'"),
], ids=["axis-twice", "axis-twice-program", "rules-without-mesh", "malformed", "strict-not-a-bool"])
def test_other_problems_stay_errors_without_a_warning(ffn, call, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("error", mi.MeshIRWarning)
        with pytest.raises(mi.MeshIRError) as info:
            call(ffn)
    assert fragment in str(info.value) and str(info.value).startswith(f"{__file__}:"), str(info.value)
