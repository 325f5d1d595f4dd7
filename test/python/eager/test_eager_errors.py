"""Bad input to eager ops, `mi.array` and `mi.jit`: each a MeshIRError located at the user's
line (the message starts with this file's path and the line of the offending call: the
innermost frame of this file in the traceback) that names the values involved."""
from __future__ import annotations

import contextlib
import traceback

import numpy as np
import pytest

import meshir as mi

MESH_A = mi.Mesh("x:2")
MESH_B = mi.Mesh("x:2;y:2")
XV = np.ones((4, 8), np.float32)
XA = mi.array(XV, ["b", "d"], mesh=MESH_A)
XB = mi.array(XV, ["b", "d"], mesh=MESH_B)


@contextlib.contextmanager
def located(kind, *names):
    """Expect a `kind` (a MeshIRError) located at the innermost line of this file that the
    exception passed through, whose message contains each of `names`."""
    assert issubclass(kind, mi.MeshIRError)
    with pytest.raises(kind) as caught:
        yield caught
    lines = [f.lineno for f in traceback.extract_tb(caught.value.__traceback__) if f.filename == __file__]
    text = str(caught.value)
    assert text.startswith(f"{__file__}:{lines[-1]}:"), (lines, text)
    for name in names:
        assert name in text, (name, text)


def test_arrays_on_different_meshes_do_not_mix():
    with located(mi.MeshIRValueError, "mi.add mixes arrays on different meshes", str(MESH_A), str(MESH_B)):
        XA + XB
    with located(mi.MeshIRValueError, "mi.einsum", str(MESH_A), str(MESH_B)):
        mi.einsum(XB, XA, output=[])

    @mi.jit
    def both(a, b):
        return a * b

    with located(mi.MeshIRValueError, "both mixes arrays on different meshes", str(MESH_A), str(MESH_B)):
        both(XA, XB)


def test_a_traced_function_closing_over_an_array_of_another_mesh():
    @mi.jit
    def closes(a):
        return a + XB

    with located(mi.MeshIRValueError, "program 'closes'", str(MESH_A), str(MESH_B), "b=4@(), d=8@(), f32",
                 "pass it as an argument"):
        closes(XA)


def test_python_control_flow_on_a_traced_value():
    @mi.jit
    def branch(a):
        if mi.reduce_sum(a) > 0:
            return a
        return -a

    @mi.jit
    def loop(a):
        while mi.reduce_max(a) < 10.0:
            a = a * 2.0
        return a

    for fn in (branch, loop):
        with located(mi.MeshIRTypeError, "has no truth value", "Python control flow", "mi.where", "mi.scan",
                     "mi.while_loop"):
            fn(XA)


def test_python_numbers_of_a_traced_value_say_what_to_use_instead():
    @mi.jit
    def scaled(a):
        return a * float(mi.reduce_max(a))

    @mi.jit
    def repeated(a):
        return a * int(mi.reduce_sum(a))

    for fn in (scaled, repeated):
        with located(mi.MeshIRTypeError, "has no Python value while the program is being built",
                     "exists only when the program runs", "mi.where", "return it as a result"):
            fn(XA)
    assert float(mi.reduce_max(XA)) == pytest.approx(float(XV.max()))  # eager: a value, converted


def test_unhashable_static_arguments():
    @mi.jit(static_argnames=("sizes",))
    def take(a, sizes, other=None):
        return a * float(len(sizes))

    with located(mi.MeshIRTypeError, "static argument 'sizes' is list", "not hashable", "tuple"):
        take(XA, [1, 2])
    with located(mi.MeshIRTypeError, "argument 'other' (set)", "neither an mi.Array nor hashable"):
        take(XA, (1, 2), {3})
    np.testing.assert_array_equal(take(XA, (1, 2)).numpy(), XV * 2)  # a tuple is fine


def test_arrays_without_dims():
    @mi.jit
    def double(x, y=None):
        return x * 2.0

    with located(mi.MeshIRTypeError, "argument 'x' is a ndarray of shape (4, 8) without dims", "mi.array(value, dims)",
                 "dims={parameter: dims}"):
        double(XV)
    with located(mi.MeshIRTypeError, "argument 'y' is a ndarray of shape (4, 8) without dims"):
        double(XA, XV)
    with located(mi.MeshIRTypeError, "argument #1 is a ndarray of shape (4, 8) without dims"):
        mi.add(XA, XV)  # an eager op
    with located(mi.MeshIRValueError, "dims ['b'] name 1 axes", "shape (4, 8)"):
        mi.array(XV, ["b"], mesh=MESH_A)
    with located(mi.MeshIRValueError, "dims ['b', 'd', 'e'] name 3 axes", "shape (4, 8)"):
        mi.array(XV, ["b", "d", "e"], mesh=MESH_A)
    with located(mi.MeshIRValueError, "dim 'b' is given size 5", "axis has 4"):
        mi.array(XV, [mi.Dim("b", 5), "d"], mesh=MESH_A)
    with located(mi.MeshIRValueError, "dim 'd' is given size 7", "axis has 8"):
        mi.array(XV, [("b", 4), ("d", 7)], mesh=MESH_A)
    with located(mi.MeshIRTypeError, "mi.Array wraps a concrete jax.Array, got ndarray", "mi.array"):
        mi.Array(XV, ["b", "d"])


def test_mi_array_needs_a_mesh_outside_default_layout():
    with located(mi.MeshIRValueError, "mi.array needs a mesh", "mi.default_layout(mesh=...)"):
        mi.array(XV, ["b", "d"])
    with mi.default_layout(mesh=MESH_A):
        assert mi.array(XV, ["b", "d"]).mesh == MESH_A
    with mi.default_layout("b:x"):  # rules without a mesh give none
        with located(mi.MeshIRValueError, "mi.array needs a mesh"):
            mi.array(XV, ["b", "d"])


def test_jit_names_that_are_no_parameter():
    def f(a, scale):
        return a * scale

    with located(mi.MeshIRValueError, "mi.jit(f): static_argnames names 'nope'", "not a parameter",
                 "parameters: a, scale"):
        mi.jit(f, static_argnames=("scale", "nope"))
    with located(mi.MeshIRValueError, "static_argnames names 'scal'"):
        @mi.jit(static_argnames="scal")
        def g(a, scale):
            return a * scale
    with located(mi.MeshIRValueError, "donate_argnames names 'b'"):
        mi.jit(f, donate_argnames=("b",))
    with located(mi.MeshIRValueError, "dims names 'x'"):
        mi.jit(f, dims={"x": ["b", "d"]})


def test_other_misuse_is_located():
    with located(mi.MeshIRTypeError, "float() of mi.Array(!mtf.tensor<b=4@(), d=8@(), f32>)", "one element"):
        float(XA)
    with located(mi.MeshIRTypeError, "mi.array of mi.Array", "mi.reshard"):
        mi.array(XA, ["b", "d"], mesh=MESH_A)

    @mi.jit
    def loss(a):
        return mi.reduce_sum(a)

    with located(mi.MeshIRTypeError, "mi.train_step takes a program", "loss.lower(*args)"):
        mi.train_step(loss, mi.SGD(0.1))
    with located(mi.MeshIRTypeError, "cotangent=True"):
        mi.grad(loss, cotangent=True)
    @mi.jit
    def no_array(a):
        return 1.0

    with located(mi.MeshIRTypeError, "no_array returned float 1.0 as result #0", "mi.Arrays"):
        no_array(XA)


def test_out_of_range_values_are_located_errors_not_raw_exceptions():
    with pytest.raises(mi.MeshIRValueError) as info:
        mi.array([2**40, 1], ["i"], mesh=MESH_A)
    assert str(info.value).startswith(f"{__file__}:") and "do not fit int32" in str(info.value)
    with mi.default_layout(mesh=MESH_A):
        try:
            mi.random_uniform([("i", 4)], seed=2**31)  # a seed beyond int32 stays the op's attribute
        except mi.MeshIRError as e:
            assert str(e).startswith(f"{__file__}:")
