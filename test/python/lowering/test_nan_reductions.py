"""Max and min over a dim split across devices keep NaN and infinities, as jnp.max does.

XLA's CPU all-reduce drops NaN in max/min (one NaN on one device gave the max of the other
devices' values, in explicit and gspmd mode alike: jax.jit with a sharded input does the
same). MeshIR sends total-order integer keys through the collective instead
(lowering/stablehlo/total_order.py). Each program here computes, over a split dim `b`:
reduce_max and reduce_min completed by an all_reduce, a softmax, and (from IR: no API
function makes a pending value) a pending max/min completed by a reduce_scatter, on every
mesh of the op-case suite, in both modes, against NumPy, jax.numpy on one device and the
interpreter.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import meshir as mi
from op_cases import MESHES

A, B = 8, 16

#: Rows that each stress one case: a NaN on one device, NaN beside +inf, infinities only,
#: one device all -inf, a whole row of NaN, -0/+0, and plain values.
def _rows(rng) -> np.ndarray:
    x = rng.standard_normal((A, B))
    x[0, 3] = np.nan
    x[1, 5], x[1, B - 1] = np.nan, np.inf
    x[2, :] = -np.inf
    x[2, 7] = np.inf
    x[3, : B // 2] = -np.inf
    x[4, :] = np.nan
    x[5, :] = 0.0
    x[5, ::2] = -0.0
    x[6, B - 1] = np.nan
    return x


def _layouts(mesh: dict) -> list[dict]:
    axes = list(mesh)
    if len(axes) == 1:
        return [{"b": "x"}]
    return [{"b": "x"}, {"b": tuple(axes)}, {"a": axes[1], "b": axes[0]}]


def _program(mesh: dict, dtype: str) -> mi.Program:
    """max, min and softmax over b: the pending max/min are completed by all_reduces."""
    with mi.Program("nan_reductions", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [mi.Dim("a", A), mi.Dim("b", B)], dtype)
        prog.result(mi.reduce_max(x, over="b"), name="max")
        prog.result(mi.reduce_min(x, over="b"), name="min")
        if dtype != "bf16":
            prog.result(mi.softmax(x, "b"), name="softmax")
    return prog


def _pending_ir(mesh: dict, axes: tuple[str, ...], dtype: str):
    """The pending max/min written by hand and completed by reduce_scatter along a (no API
    function makes a pending value; propagation would rather reshard x than scatter)."""
    mesh_text = ", ".join(f'"{k}"={v}' for k, v in mesh.items())
    ax = axes[0] if len(axes) == 1 else "(" + ", ".join(axes) + ")"
    quoted = ", ".join(f'"{a}"' for a in axes)
    x_t = f"!mtf.tensor<a={A}, b={B}@{ax}, {dtype}>"
    out_t = f"!mtf.tensor<a={A}@{ax}, {dtype}>"
    lines = [f"sdy.mesh @mesh = <[{mesh_text}]>",
             f'func.func @f(%x: {x_t} {{mtf.name = "x"}}) -> ({out_t} {{mtf.name = "max_scattered"}}, '
             f'{out_t} {{mtf.name = "min_scattered"}}) attributes {{mtf.mesh = @mesh}} {{']
    for kind in ("max", "min"):
        pending = f"!mtf.tensor<a={A}, {dtype}, partial_{kind}@{ax}>"
        lines.append(f'  %p{kind} = "mtf.reduce_{kind}"(%x) : ({x_t}) -> {pending}')
        lines.append(f'  %{kind} = "mtf.reduce_scatter"(%p{kind}) {{reduction = "{kind}", dim = "a", axes = [{quoted}]}}'
                     f" : ({pending}) -> {out_t}")
    lines += [f"  func.return %max, %min : {out_t}, {out_t}", "}"]
    module, diagnostics = mi.parse_module("\n".join(lines), "pending.mlir")
    assert not diagnostics, diagnostics
    return module


def _expected(x: np.ndarray, name: str) -> np.ndarray:
    """jnp on one device (x64, so f64 stays f64; softmax in f64); max and min checked equal
    to NumPy's."""
    with jax.enable_x64(True):
        if name == "softmax":
            return np.asarray(jax.nn.softmax(jnp.asarray(x, jnp.float64), axis=1))
        reduce, np_reduce = (jnp.max, np.max) if name.startswith("max") else (jnp.min, np.min)
        ref = np.asarray(jax.jit(lambda v: reduce(v, axis=1))(x)).astype(np.float64)
    np.testing.assert_array_equal(ref, np_reduce(x.astype(np.float64), axis=1))
    return ref


def _params():
    for mesh_id, mesh in MESHES.items():
        for layout in _layouts(mesh):
            for mode in ("explicit", "gspmd"):
                yield pytest.param(mesh_id, layout, mode, "f32",
                                   id=f"{mesh_id}-{'_'.join(f'{k}:{v}' for k, v in layout.items())}-{mode}")
    for dtype in ("bf16", "f16", "f64"):
        for mode in ("explicit", "gspmd"):
            yield pytest.param("x4y2", {"b": "x"}, mode, dtype, id=f"x4y2-{dtype}-{mode}")


NP_DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f64": np.float64}


def _check(names, results, interpreted, x, what):
    for name, got, interp in zip(names, results, interpreted):
        got, expected = np.asarray(got).astype(np.float64), _expected(x, name)
        if name == "softmax":
            tol = 1e-12 if x.dtype == np.float64 else 2e-3 if x.dtype == np.float16 else 1e-5
            np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=f"{name}: {what}")
            np.testing.assert_array_equal(np.asarray(interp).astype(np.float64), expected, err_msg=f"interpreter {name}: {what}")
        assert np.array_equal(np.isnan(got), np.isnan(expected)), f"{name}: {what}"


@pytest.mark.parametrize("mesh_id, layout, mode, dtype", list(_params()))
def test_split_max_min_softmax_keep_nan_and_inf(mesh_id, layout, mode, dtype):
    prog = _program(MESHES[mesh_id], dtype)
    exe = mi.compile(prog, layout=layout, mode=mode)
    if mode == "explicit":
        assert "all_reduce" in {c.kind for c in exe.compile_report.collectives}
    x = _rows(np.random.default_rng(0)).astype(NP_DTYPES[dtype])
    with jax.enable_x64(dtype == "f64"):  # f64 arguments keep their type
        results = exe(x=x)
    _check(prog.result_names, results, mi.interpret(prog, x=x), x, f"{mesh_id} {layout} {mode}")


@pytest.mark.parametrize("mesh_id", list(MESHES))
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_reduce_scatter_of_pending_max_min_keeps_nan_and_inf(mesh_id, dtype):
    axes = tuple(MESHES[mesh_id])
    module = _pending_ir(MESHES[mesh_id], axes, dtype)
    x = _rows(np.random.default_rng(1)).astype(NP_DTYPES[dtype])
    for mode in ("explicit", "gspmd"):
        exe = mi.compile(module, mode=mode)
        if mode == "explicit":
            assert [c.kind for c in exe.compile_report.collectives] == ["reduce_scatter"] * 2
        _check(("max_scattered", "min_scattered"), exe(x=x), mi.interpret(module, x=x), x, f"{mesh_id} {mode}")


def test_reduce_of_all_nan_shards_and_integer_max_unchanged():
    """Integers do not go through keys; a mesh where every shard of a row is NaN still
    gives NaN, not the key of some other value."""
    with mi.Program("ints", mi.Mesh({"x": 8})) as prog:
        i = prog.argument("i", [mi.Dim("a", 4), mi.Dim("b", 8)], "i32")
        f = prog.argument("f", [mi.Dim("a", 4), mi.Dim("b", 8)])
        prog.result(mi.reduce_max(i, over="b"), name="imax")
        prog.result(mi.reduce_min(i, over="b"), name="imin")
        prog.result(mi.reduce_max(f, over="b"), name="fmax")
    exe = mi.compile(prog, layout={"b": "x"})
    ints = np.array([[np.iinfo(np.int32).min] * 8, [np.iinfo(np.int32).max] * 8, list(range(-4, 4)), [0] * 8],
                    np.int32)
    floats = np.full((4, 8), np.nan, np.float32)
    floats[1] = -np.inf
    floats[2] = np.arange(8)
    floats[3, 0] = np.inf
    imax, imin, fmax = exe(i=ints, f=floats)
    np.testing.assert_array_equal(np.asarray(imax), ints.max(axis=1))
    np.testing.assert_array_equal(np.asarray(imin), ints.min(axis=1))
    np.testing.assert_array_equal(np.asarray(fmax), np.max(floats, axis=1))


@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
def test_lazy_max_of_two_pending_maxes_keeps_nan(mode):
    """max(reduce_max(x), reduce_max(y)) over a split dim is one all_reduce in explicit mode
    (the elementwise max runs on the pending values): NaN from either side still wins."""
    with mi.Program("lazy_max", mi.Mesh({"x": 4})) as prog:
        x = prog.argument("x", [mi.Dim("a", 4), mi.Dim("b", 8)])
        y = prog.argument("y", [mi.Dim("a", 4), mi.Dim("b", 8)])
        prog.result(mi.maximum(mi.reduce_max(x, over="b"), mi.reduce_max(y, over="b")), name="m")
    exe = mi.compile(prog, layout={"b": "x"}, mode=mode)
    if mode == "explicit":
        assert [c.kind for c in exe.compile_report.collectives] == ["all_reduce"]
    xv = np.arange(32, dtype=np.float32).reshape(4, 8)
    yv = -xv
    xv[0, 1], yv[1, 6], yv[2, 2] = np.nan, np.nan, np.inf
    xv[3], yv[3] = -np.inf, -np.inf
    want = np.maximum(np.max(xv, axis=1), np.max(yv, axis=1))
    np.testing.assert_array_equal(np.asarray(exe(x=xv, y=yv)), want)
    np.testing.assert_array_equal(mi.interpret(prog, x=xv, y=yv), want)
