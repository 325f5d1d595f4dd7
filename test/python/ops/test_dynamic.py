"""dynamic_slice and dynamic_update_slice against jax.lax and the interpreter on several
meshes and layouts in both modes, for starts inside, across block boundaries, negative and
past the end (jax's wrapping and clamping), windows of 1 and of the whole dim; gradients
against jax.grad in float64; the bytes of a split dim's window from the compiled HLO; bad input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi

B, V = mi.Dim("b", 4), mi.Dim("v", 16)
STARTS = (-20, -3, 0, 1, 3, 4, 7, 11, 13, 15, 40)
LAYOUTS = [
    ({"x": 8}, {}),
    ({"x": 8}, {"v": "x"}),  # blocks of 2: every window spans blocks
    ({"x": 4, "y": 2}, {"v": ("x", "y")}),
    ({"x": 2, "y": 4}, {"v": ("y", "x")}),
    ({"x": 4, "y": 2}, {"b": "y", "v": "x"}),
]


def program(mesh_shape, rules):
    with mi.Program("windows", mi.Mesh(mesh_shape), layout=rules) as prog:
        x, start = prog.argument("x", [B, V]), prog.argument("start", [], "i32")
        update = prog.argument("update", [B, mi.Dim("v", 8)])
        prog.result(mi.dynamic_slice(x, "v", start, 5), name="window")
        prog.result(mi.dynamic_slice(x, "v", start, 1), name="one")
        prog.result(mi.dynamic_slice(x, "v", 3, 16), name="whole")
        prog.result(mi.dynamic_update_slice(x, "v", start, update), name="updated")
        prog.result(mi.dynamic_update_slice(x, "v", -1, mi.dynamic_slice(update, "v", 0, 1)), name="last")
    return prog


@pytest.mark.parametrize("mesh_shape,rules", LAYOUTS, ids=[str(r) for _, r in LAYOUTS])
def test_windows_equal_jax_and_the_interpreter(mesh_shape, rules):
    prog = program(mesh_shape, rules)
    r = np.random.default_rng(0)
    x, update = r.normal(size=(4, 16)).astype(np.float32), r.normal(size=(4, 8)).astype(np.float32)
    x[1, 6], x[2, 9] = np.nan, np.inf
    executables = [mi.compile(prog, mode=mode) for mode in ("explicit", "gspmd")]
    for s in STARTS:
        want = {"window": jax.lax.dynamic_slice_in_dim(x, s, 5, axis=1), "one": jax.lax.dynamic_slice_in_dim(x, s, 1, axis=1),
                "whole": x, "updated": jax.lax.dynamic_update_slice_in_dim(x, update, s, axis=1),
                "last": jax.lax.dynamic_update_slice_in_dim(x, update[:, :1], -1, axis=1)}
        for got in [exe(x, np.int32(s), update) for exe in executables] + [mi.interpret(prog, x, np.int32(s), update)]:
            for name in prog.result_names:
                np.testing.assert_array_equal(np.asarray(getattr(got, name)), np.asarray(want[name]),
                                              err_msg=f"{name} at start {s}")


@pytest.mark.parametrize("mesh_shape,rules", LAYOUTS[:3], ids=[str(r) for _, r in LAYOUTS[:3]])
def test_gradients_equal_jax_in_float64(mesh_shape, rules):
    with mi.Program("loss", mi.Mesh(mesh_shape), layout=rules) as prog:
        x, start = prog.argument("x", [B, V]), prog.argument("start", [], "i32")
        update, w = prog.argument("update", [B, mi.Dim("v", 8)]), prog.argument("w", [B, V])
        window = mi.dynamic_slice(x, "v", start, 8)
        written = mi.dynamic_update_slice(x, "v", start + 4, update * window)
        prog.result(mi.reduce_sum(written * written * w), name="loss")
    r = np.random.default_rng(1)
    x, update, w = (r.normal(size=shape).astype(np.float32) for shape in ((4, 16), (4, 8), (4, 16)))
    exe = mi.compile(mi.value_and_grad(prog, wrt=["x", "update"]))
    for s in (-5, 0, 3, 9, 12):
        loss, gx, gu = exe(x, np.int32(s), update, w)
        with jax.enable_x64(True):
            def f(x, update):
                window = jax.lax.dynamic_slice_in_dim(x, s, 8, axis=1)
                written = jax.lax.dynamic_update_slice_in_dim(x, update * window, s + 4, axis=1)
                return jnp.sum(written * written * w)
            want_loss, (want_x, want_u) = jax.value_and_grad(f, argnums=(0, 1))(x.astype(np.float64), update.astype(np.float64))
            np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
            np.testing.assert_allclose(np.asarray(gx), np.asarray(want_x), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(np.asarray(gu), np.asarray(want_u), rtol=1e-5, atol=1e-5)


def _window_bytes(size: int) -> tuple[int, list]:
    from meshir.lowering.runtime import hlo_collectives as hlo_stats
    with mi.Program("cache", mi.Mesh({"x": 8}), layout={"v": "x"}) as prog:
        x, start = prog.argument("x", [B, mi.Dim("v", size)]), prog.argument("start", [], "i32")
        # an update of one position (a window of a replicated value: a layout rule leaves a
        # window's dim unsplit where its axes do not divide the window)
        token = mi.dynamic_slice(mi.reshard(prog.argument("tokens", [B, mi.Dim("v", 8)]), {"v": ()}), "v", 0, 1)
        prog.result(mi.dynamic_slice(x, "v", start, 4), name="window")
        prog.result(mi.dynamic_update_slice(x, "v", start, token), name="written")
    exe = mi.compile(prog)
    found = [c for c in hlo_stats.parse_collectives(exe.compiled_hlo_text()) if c.kind == "all-reduce"]
    return sum(c.operand_bytes for c in found), [(c.kind, c.detail) for c in exe.compile_report.collectives]


def test_a_window_of_a_split_dim_moves_bytes_independent_of_the_dim():
    """Reading a window all-reduces the window only; writing one moves nothing (the update of
    one position is replicated already): a decoding cache at any length."""
    small, report = _window_bytes(64)
    large, _ = _window_bytes(4096)
    assert small == large == B.size * 4 * 4  # the window [4, 4] f32 in one all-reduce
    assert report == [("all_gather", "dim=v"), ("all_reduce", "dynamic_slice window, dim=v")]  # the token, the window


def test_bad_input_is_a_located_error():
    with mi.Program("bad", mi.Mesh({"x": 2})) as prog:
        x = prog.argument("x", [B, V])
        f, vec = prog.argument("f", [], "f32"), prog.argument("vec", [B], "i32")
        cases = [
            (lambda: mi.dynamic_slice(x, "v", f, 2), "must be an int or a 0-d int32 Tensor"),
            (lambda: mi.dynamic_slice(x, "v", vec, 2), "must be an int or a 0-d int32 Tensor"),
            (lambda: mi.dynamic_slice(x, "v", 1.5, 2), "start of mi.dynamic_slice"),
            (lambda: mi.dynamic_slice(x, "w", 0, 2), "'w' is not a dimension"),
            (lambda: mi.dynamic_slice(x, "v", 0, 17), r"size 17 is not in \[1, 16\]"),
            (lambda: mi.dynamic_slice(x, "v", 0, 0), r"size 0 is not in \[1, 16\]"),
            (lambda: mi.dynamic_update_slice(x, "v", 0, mi.constant(0.0, [mi.Dim("b", 3), mi.Dim("v", 2)])),
             "'b' has size 4 in the operand but 3 in the update"),
            (lambda: mi.dynamic_update_slice(x, "v", 0, mi.constant(0.0, [mi.Dim("v", 2), B])),
             r"update names \[v, b\] must equal the operand's \[b, v\]"),
            (lambda: mi.dynamic_update_slice(x, "v", 0, mi.constant(0.0, [B, mi.Dim("v", 17)])),
             r"the update's 'v' has size 17, not in \[1, 16\]"),
            (lambda: mi.dynamic_update_slice(x, "v", 0, mi.constant(0, [B, mi.Dim("v", 2)], "i32")),
             "update element type i32 must be the operand's f32"),
        ]
        for make, message in cases:
            with pytest.raises(mi.MeshIRError, match=message) as info:
                make()
            assert "test_dynamic.py" in str(info.value)
