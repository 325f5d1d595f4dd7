"""`mtf.erf`, the op added by following docs/architecture.md's "How to add an op": values on
every mesh of the op-case suite and in both modes against SciPy's erf in float64 (NaN,
infinities, signed zeros, subnormals, saturating values included), the reference
interpreter against the same oracle, and the gradient inside a program against jax.grad."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special
import ml_dtypes
import numpy as np
import pytest
import scipy.special

import meshir as mi
from op_cases import MESHES

A, B = 4, 8
EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 6.0, -6.0, 30.0, 0.5, -0.5]


def _inputs(dtype) -> np.ndarray:
    x = np.random.default_rng(7).uniform(-3, 3, (A, B))
    x.flat[: len(EDGES)] = EDGES
    return x.astype(dtype)


def _oracle(x: np.ndarray) -> np.ndarray:
    return scipy.special.erf(x.astype(np.float64))


def _program(mesh: dict, dtype: str) -> mi.Program:
    with mi.Program("erf", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [mi.Dim("a", A), mi.Dim("b", B)], dtype)
        prog.result(mi.erf(x), name="y")
    return prog


def _layouts(mesh: dict) -> list[dict]:
    axes = list(mesh)
    if len(axes) == 1:
        return [{}, {"b": axes[0]}]
    return [{"a": axes[0], "b": axes[1]}, {"b": tuple(axes)}]


@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
@pytest.mark.parametrize("mesh_id", sorted(MESHES))
def test_erf_matches_scipy_on_every_mesh(mesh_id, mode):
    mesh = MESHES[mesh_id]
    for dtype, np_dtype, tol in (("f32", np.float32, 2e-7), ("bf16", ml_dtypes.bfloat16, 8e-3)):
        x = _inputs(np_dtype)
        prog = _program(mesh, dtype)
        want = _oracle(x)
        for layout in _layouts(mesh):
            got = np.asarray(mi.compile(prog, layout=layout, mode=mode)(x=x)).astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{mesh_id} {layout} {mode} {dtype}")
            assert np.array_equal(np.isnan(got), np.isnan(want))
            assert np.array_equal(np.signbit(got), np.signbit(want)), "erf(-0) is -0"
        interpreted = np.asarray(mi.interpret(prog, x=x)).astype(np.float64)
        np.testing.assert_allclose(interpreted, want, rtol=tol, atol=tol, err_msg=f"interpreter {dtype}")


def test_erf_gradient_matches_jax():
    mesh = {"x": 2, "y": 4}
    with mi.Program("erf_grad", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [mi.Dim("a", A), mi.Dim("b", B)], "f32")
        prog.result(mi.reduce_sum(mi.erf(x) * x, over=["a", "b"]), name="loss")
    x = np.random.default_rng(3).uniform(-3, 3, (A, B)).astype(np.float32)
    exe = mi.compile(mi.grad(prog, wrt=["x"]), layout={"a": "x", "b": "y"})
    got = np.asarray(exe(x=x))
    want = jax.grad(lambda v: jnp.sum(jax.scipy.special.erf(v) * v))(jnp.asarray(x))
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-6)


def test_erf_refuses_integers():
    with mi.Program("erf_int", mi.Mesh({"x": 2})) as prog:
        ids = prog.argument("ids", [mi.Dim("a", A)], "i32")
        with pytest.raises(mi.MeshIRError, match=r"'mtf.erf' op operand element type i32 is not supported"):
            mi.erf(ids)
