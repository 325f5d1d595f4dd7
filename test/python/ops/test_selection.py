"""top_k, argmax and argmin against JAX (float64 where it matters) and the interpreter, on
several meshes and layouts in both modes, with NaN of both signs, signed zeros, ties, a dim
of size 1 and k equal to the dim; top_k's gradient against jax.grad in float64; the bytes of
a split dim's merge from the compiled HLO; and bad input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi

B, V, ONE = mi.Dim("b", 4), mi.Dim("v", 16), mi.Dim("one", 1)

LAYOUTS = [
    ({"x": 8}, {}),
    ({"x": 8}, {"v": "x"}),  # blocks of 2 rows, k = 3 larger than a block
    ({"x": 4, "y": 2}, {"v": ("x", "y"), "b": None}),
    ({"x": 4, "y": 2}, {"v": "x", "kv": "y"}),  # a k dim split after the merge
    ({"x": 2, "y": 4}, {"v": ("y", "x")}),
]


def program(mesh_shape, rules, dtype="f32"):
    with mi.Program("select", mi.Mesh(mesh_shape), layout={k: v for k, v in rules.items() if v}) as prog:
        x, one = prog.argument("x", [B, V], dtype), prog.argument("one", [B, ONE], dtype)
        values, indices = mi.top_k(x, "v", mi.Dim("k", 3))
        whole, whole_indices = mi.top_k(x, "v", mi.Dim("kv", 16))
        prog.result(values, name="values")
        prog.result(indices, name="indices")
        prog.result(whole, name="whole")
        prog.result(whole_indices, name="whole_indices")
        prog.result(mi.argmax(x, "v"), name="argmax")
        prog.result(mi.argmin(x, "v"), name="argmin")
        prog.result(mi.argmax(x, "b"), name="argmax_b")
        prog.result(mi.top_k(one, "one", mi.Dim("k1", 1))[1], name="only")
    return prog


def special_input(dtype):
    """Rows with NaN of both signs, signed zeros and ties."""
    r = np.random.default_rng(0)
    if dtype == "i32":
        x = r.integers(-3, 3, size=(4, 16)).astype(np.int32)
        x[0, 3] = np.iinfo(np.int32).min
        x[1, 7] = np.iinfo(np.int32).max
        return x
    x = r.integers(-3, 3, size=(4, 16)).astype(np.float32)  # many ties
    x[0, 5], x[0, 11] = np.nan, -np.float32(np.nan)
    x[1, 2], x[1, 9] = -0.0, 0.0
    x[1, :] = np.where(np.abs(x[1]) > 0, -5, x[1])  # the zeros are the maxima
    x[2, :] = -np.float32(np.nan)
    x[3, 0] = np.inf
    return x


def jax_reference(x):
    xj = jnp.asarray(x)
    values, indices = jax.lax.top_k(xj, 3)
    whole, whole_indices = jax.lax.top_k(xj, 16)
    return {"values": values, "indices": indices, "whole": whole, "whole_indices": whole_indices,
            "argmax": jnp.argmax(xj, axis=1), "argmin": jnp.argmin(xj, axis=1), "argmax_b": jnp.argmax(xj, axis=0),
            "only": jnp.zeros((4, 1), jnp.int32)}


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":  # NaN signs too: compare bits
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mesh_shape,rules", LAYOUTS, ids=[str(r) for _, r in LAYOUTS])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_selection_equals_jax_and_the_interpreter(mesh_shape, rules, dtype):
    prog = program(mesh_shape, rules, dtype)
    x = special_input(dtype)
    one = np.arange(4, dtype=x.dtype).reshape(4, 1)
    want = jax_reference(x)
    interpreted = mi.interpret(prog, x, one)
    for mode in ("explicit", "gspmd"):
        got = mi.compile(prog, mode=mode)(x, one)
        for name in prog.result_names:
            same(getattr(got, name), want[name])
            same(getattr(interpreted, name), want[name])


@pytest.mark.parametrize("mesh_shape,rules", LAYOUTS[:4], ids=[str(r) for _, r in LAYOUTS[:4]])
def test_top_k_gradient_equals_jax_in_float64(mesh_shape, rules):
    with mi.Program("loss", mi.Mesh(mesh_shape), layout={k: v for k, v in rules.items() if v}) as prog:
        x, w = prog.argument("x", [B, V]), prog.argument("w", [mi.Dim("k", 3)])
        values, _ = mi.top_k(x, "v", mi.Dim("k", 3))
        prog.result(mi.reduce_sum(values * values * w), name="loss")
    r = np.random.default_rng(1)
    x, w = r.normal(size=(4, 16)).astype(np.float32), r.normal(size=3).astype(np.float32)
    loss, grad = mi.compile(mi.value_and_grad(prog, wrt=["x"]))(x, w)
    with jax.enable_x64(True):
        def f(x):
            values, _ = jax.lax.top_k(x, 3)
            return jnp.sum(values * values * jnp.asarray(w, jnp.float64))
        want_loss, want_grad = jax.value_and_grad(f)(jnp.asarray(x, jnp.float64))
        np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(grad), np.asarray(want_grad), rtol=1e-6, atol=1e-6)


def _gathered_bytes(size: int, k: int) -> int:
    """Bytes of the all-gathers in the compiled HLO of top_k along a dim of `size` split over 8."""
    from meshir.lowering.runtime import hlo_collectives as hlo_stats
    with mi.Program("merge", mi.Mesh({"x": 8}), layout={"v": "x"}) as prog:
        values, indices = mi.top_k(prog.argument("x", [B, mi.Dim("v", size)]), "v", mi.Dim("k", k))
        prog.result(values)
        prog.result(indices)
    exe = mi.compile(prog)
    found = [c for c in hlo_stats.parse_collectives(exe.compiled_hlo_text()) if c.kind == "all-gather"]
    assert found and {c.kind for c in hlo_stats.parse_collectives(exe.compiled_hlo_text())} == {"all-gather"}
    recorded = [c for c in exe.compile_report.collectives if c.kind == "all_gather"]
    assert [c.detail for c in recorded] == ["top_k candidates, dim=v"]
    assert recorded[0].bytes_per_device == 7 * B.size * k * (4 + 4)
    return sum(c.operand_bytes for c in found)


def test_a_split_top_k_moves_bytes_that_grow_with_k_not_with_the_dim():
    small, large, wide = _gathered_bytes(64, 2), _gathered_bytes(1024, 2), _gathered_bytes(1024, 8)
    assert small == large  # 16x the dim, the same bytes
    assert wide == 4 * large  # 4x k, 4x the bytes
    assert large == B.size * 2 * (4 + 4)  # each device's k values and k i32 indices


def test_bad_input_is_a_located_error():
    with mi.Program("bad", mi.Mesh({"x": 2})) as prog:
        x = prog.argument("x", [B, V])
        flags = prog.argument("flags", [B, V], "i1")
        cases = [
            (lambda: mi.top_k(x, "v", mi.Dim("k", 17)), r"k = 17 \(the size of 'k'\) is larger than 'v' \(size 16\)"),
            (lambda: mi.top_k(x, "v", mi.Dim("b", 2)), "k_dim 'b' is already a dimension"),
            (lambda: mi.top_k(x, "w", mi.Dim("k", 2)), "'w' is not a dimension"),
            (lambda: mi.top_k(x, "v", "k"), "k_dim must be a Dim or a \\(name, k\\) pair"),
            (lambda: mi.top_k(x, "v", ("k", 0)), "sizes must be positive integers"),
            (lambda: mi.argmax(x, "w"), "'w' is not a dimension"),
            (lambda: mi.argmin(flags, "v"), "argmin needs a numeric operand, got i1"),
            (lambda: mi.top_k(np.zeros(3), "v", mi.Dim("k", 1)), "MeshIR Tensor"),
        ]
        for make, message in cases:
            with pytest.raises(mi.MeshIRError, match=message) as info:
                make()
            assert "test_selection.py" in str(info.value)
