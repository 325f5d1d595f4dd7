"""What an Executable accepts as arguments, how it places them, and how it refuses bad ones."""
from __future__ import annotations

import re

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

from meshir.dialect import Mesh, MeshIRError
from meshir.lowering.runtime import Executable, jax_mesh
from runtime_modules import elementwise, matmul_add

MESH = Mesh({"x": 4, "y": 2})
RNG = np.random.default_rng(1)


@pytest.fixture(scope="module")
def matmul():
    """y = x @ w + b on the 4x2 mesh: x [m=8@x, k=8@y], w [k=8@y, n=4@()], b [m=8@x, n=4@()]."""
    text, sig = matmul_add(MESH, "y")
    return Executable(text, MESH, sig)


@pytest.fixture(scope="module")
def inputs():
    return {"x": RNG.standard_normal((8, 8)).astype(np.float32), "w": RNG.standard_normal((8, 4)).astype(np.float32),
            "b": RNG.standard_normal((8, 4)).astype(np.float32)}


def expected(inputs):
    return inputs["x"] @ inputs["w"] + inputs["b"]


def check(result, inputs):
    np.testing.assert_allclose(np.asarray(result), expected(inputs), rtol=1e-5, atol=1e-5)
    assert result.sharding.spec == P("x", None)


def test_numpy_by_name_and_by_position(matmul, inputs):
    check(matmul(**inputs), inputs)
    check(matmul(inputs["x"], inputs["w"], inputs["b"]), inputs)
    check(matmul(inputs["x"], b=inputs["b"], w=inputs["w"]), inputs)


def test_python_lists_and_widening_conversions(matmul, inputs):
    ints = {"x": np.arange(64).reshape(8, 8) % 5, "w": np.ones((8, 4), np.int32), "b": [[0.5] * 4] * 8}
    as_float = {k: np.asarray(v, np.float32) for k, v in ints.items()}
    check(matmul(x=ints["x"].tolist(), w=ints["w"], b=ints["b"]), as_float)
    check(matmul(**{k: np.asarray(v, np.float64) for k, v in inputs.items()}), inputs)


def test_jax_array_with_the_right_sharding_is_used_in_place(matmul, inputs):
    placed = {k: jax.device_put(v, s) for (k, v), s in zip(inputs.items(), matmul.in_shardings)}
    check(matmul(**placed), inputs)


def test_jax_array_with_another_sharding_is_resharded(matmul, inputs):
    mesh = jax_mesh(MESH)
    other = {"x": NamedSharding(mesh, P("y", "x")), "w": NamedSharding(mesh, P(None, None)),
             "b": NamedSharding(mesh, P(("y", "x"), None))}
    check(matmul(**{k: jax.device_put(v, other[k]) for k, v in inputs.items()}), inputs)


def test_jax_array_on_one_device_or_on_devices_outside_the_mesh(matmul, inputs):
    check(matmul(**{k: jax.device_put(v, jax.devices()[5]) for k, v in inputs.items()}), inputs)
    text, sig = matmul_add(Mesh({"x": 2}), "x")
    small = Executable(text, Mesh({"x": 2}), sig)
    far = jax.sharding.Mesh(np.array(jax.devices()[4:8]), ("d",))
    placed = {k: jax.device_put(v, NamedSharding(far, P("d"))) for k, v in inputs.items()}
    np.testing.assert_allclose(np.asarray(small(**placed)), expected(inputs), rtol=1e-5, atol=1e-5)


def test_jax_array_of_a_narrower_kind_is_converted(matmul, inputs):
    x = jax.numpy.asarray(np.arange(64, dtype=np.int32).reshape(8, 8))
    check(matmul(x=x, w=inputs["w"], b=inputs["b"]), dict(inputs, x=np.asarray(x, np.float32)))


def test_results_feed_the_next_call_without_copies(matmul, inputs):
    text, sig = elementwise(MESH, "f32")
    double = Executable(text, MESH, sig)
    y = double(np.arange(8.0, dtype=np.float32), np.ones(8, np.float32))
    z = double(y, y)
    np.testing.assert_array_equal(np.asarray(z), 2 * (np.arange(8) + 1))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda f, i: f(**i, v=1), r"@f has no argument 'v' \(arguments: x, w, b\)"),
        (lambda f, i: f(x=i["x"], w=i["w"]), r"@f is missing argument 'b' \(arguments: x, w, b\)"),
        (lambda f, i: f(), r"@f is missing arguments 'x', 'w', 'b'"),
        (lambda f, i: f(i["x"], i["w"], i["b"], i["b"]), r"@f takes 3 arguments \(x, w, b\), got 4 positional"),
        (lambda f, i: f(i["x"], i["w"], i["b"], x=i["x"]), r"argument 'x' of @f is given twice"),
        (lambda f, i: f(**dict(i, x=np.zeros((8, 4), np.float32))),
         r"argument 'x' of @f: expected global shape \[m=8, k=8\], got \(8, 4\)"),
        (lambda f, i: f(**dict(i, w=jax.numpy.zeros((4, 8)))),
         r"argument 'w' of @f: expected global shape \[k=8, n=4\], got \(4, 8\)"),
        (lambda f, i: f(**dict(i, b=np.zeros((8, 4), np.complex64))),
         r"argument 'b' of @f: expected element type f32 \(float32\), got complex64"),
        (lambda f, i: f(**dict(i, b="text")), r"argument 'b' of @f: expected element type f32 \(float32\), got str"),
    ],
    ids=["unknown", "missing", "missing-all", "too-many", "duplicate", "shape", "jax-shape", "dtype", "str"],
)
def test_bad_calls_are_clear_errors(matmul, inputs, call, message):
    with pytest.raises(MeshIRError, match=message):
        call(matmul, inputs)


def test_wrong_dtype_kinds_for_integer_and_bool_arguments():
    text, sig = elementwise(Mesh({"x": 2}), "i32")
    ints = Executable(text, Mesh({"x": 2}), sig)
    with pytest.raises(MeshIRError, match=r"argument 'a' of @f: expected element type i32 \(int32\), got float32"):
        ints(np.zeros(8, np.float32), np.zeros(8, np.int32))
    with pytest.raises(MeshIRError, match=r"argument 'b' of @f: expected element type i32 \(int32\), got float32"):
        ints(np.zeros(8, np.int32), jax.numpy.zeros(8, np.float32))
    with pytest.raises(MeshIRError, match=r"values in \[0, 4294967296\] do not fit element type i32"):
        ints(np.array([0] * 7 + [2**32]), np.zeros(8, np.int32))
    text, sig = elementwise(Mesh({"x": 2}), "i1", "and")
    with pytest.raises(MeshIRError, match=r"expected element type i1 \(bool\), got int"):
        Executable(text, Mesh({"x": 2}), sig)(np.zeros(8, np.int32), np.zeros(8, bool))


@pytest.mark.parametrize("elem, largest", [("f32", "3.4028235e\\+38"), ("bf16", "3.3895314e\\+38"),
                                            ("f16", "65504")])
def test_floats_that_do_not_fit_are_refused_not_made_inf(elem, largest):
    """A finite value too large for the argument's float type would silently become inf: it is
    a MeshIRValueError naming the argument, the value and its index. Infinities and NaNs pass
    through; underflow to zero is rounding, allowed. Reference: NumPy's own conversion."""
    import ml_dtypes

    dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[elem]
    mesh = Mesh({"x": 2})
    text, sig = elementwise(mesh, elem)
    add = Executable(text, mesh, sig)
    zeros = np.zeros(8, dtype)
    huge = {"f32": 1e40, "bf16": 1e39, "f16": 1e5}[elem]
    with pytest.raises(MeshIRError, match=rf"argument 'a' of @f: value {re.escape(repr(huge))} at index \(3,\) does not fit element "
                                          rf"type {elem} \(largest finite value {largest}; 2 values would become inf\)"):
        add(np.array([0, 1, 2, huge, 0, -huge, 0, 0]), zeros)
    if elem == "f16":  # an integer too large for the float type
        with pytest.raises(MeshIRError, match=r"argument 'b' of @f: value 100000 at index \(0,\) does not fit"):
            add(zeros, np.array([100000] + [0] * 7))
    passing = np.array([np.inf, -np.inf, np.nan, 1e-50, -1e-50, 1.5, -2.0, 0.0])  # float64
    got = np.asarray(add(passing, zeros)).astype(np.float64)
    np.testing.assert_array_equal(got, passing.astype(dtype).astype(np.float64))
    assert np.isnan(got[2]) and got[3] == 0.0 and np.isinf(got[:2]).all()
    if elem != "f32":  # a jax.Array of another float type goes through the same check
        with pytest.raises(MeshIRError, match=r"argument 'a' of @f: value .* does not fit element type"):
            add(jax.numpy.full(8, 3.4e38, np.float32), zeros)


def test_traced_values_are_checked_as_concrete_ones(matmul, inputs):
    """Inside jax.jit a call is embedded (test/python/interop/test_in_jax.py); a traced value
    of the wrong shape is refused at the call, as a concrete one is."""
    with pytest.raises(MeshIRError, match=r"argument 'x' of @\w+: expected global shape"):
        jax.jit(lambda x: matmul(x, inputs["w"], inputs["b"]))(inputs["x"][:1])
