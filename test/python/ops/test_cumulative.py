"""cumsum and cumprod against jax.lax in float64 and the interpreter, every variant
(exclusive, reverse) on several meshes and layouts in both modes, with NaN, inf, zeros and a
dim of size 1; gradients against jax.grad in float64 (zeros in cumprod's operand included);
the bytes of a split dim's merge from the compiled HLO; and bad input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi

B, V, ONE = mi.Dim("b", 4), mi.Dim("v", 16), mi.Dim("one", 1)
VARIANTS = [(kind, exclusive, reverse) for kind in ("sum", "prod") for exclusive in (False, True) for reverse in (False, True)]
LAYOUTS = [
    ({"x": 8}, {}),
    ({"x": 8}, {"v": "x"}),  # blocks of 2
    ({"x": 4, "y": 2}, {"v": ("x", "y")}),  # blocks of 2 over two axes
    ({"x": 2, "y": 4}, {"v": ("y", "x"), "b": None}),
    ({"x": 4, "y": 2}, {"b": "y", "v": "x"}),
]


def mi_scan(kind):
    return mi.cumsum if kind == "sum" else mi.cumprod


def jax_scan(x, kind, exclusive, reverse, axis=1):
    y = (jax.lax.cumsum if kind == "sum" else jax.lax.cumprod)(x, axis=axis, reverse=reverse)
    if exclusive:
        identity = jnp.full_like(jnp.take(y, jnp.array([0]), axis=axis), 0 if kind == "sum" else 1)
        n = x.shape[axis]
        rest = jnp.take(y, jnp.arange(1, n) if reverse else jnp.arange(n - 1), axis=axis)
        y = jnp.concatenate([rest, identity] if reverse else [identity, rest], axis=axis)
    return y


def name(kind, exclusive, reverse):
    return f"{kind}_{'excl' if exclusive else 'incl'}_{'rev' if reverse else 'fwd'}"


def program(mesh_shape, rules, dtype="f32"):
    with mi.Program("scan", mi.Mesh(mesh_shape), layout={k: v for k, v in rules.items() if v}) as prog:
        x, one = prog.argument("x", [B, V], dtype), prog.argument("one", [B, ONE], dtype)
        for kind, exclusive, reverse in VARIANTS:
            prog.result(mi_scan(kind)(x, "v", exclusive=exclusive, reverse=reverse), name=name(kind, exclusive, reverse))
        prog.result(mi.cumprod(one, "one", exclusive=True), name="one_excl")
        prog.result(mi.cumsum(one, "one"), name="one_incl")
    return prog


def inputs(dtype):
    r = np.random.default_rng(0)
    if dtype == "i32":
        return r.integers(-3, 4, size=(4, 16)).astype(np.int32), np.arange(4, dtype=np.int32).reshape(4, 1)
    x = (r.normal(size=(4, 16)) * 0.5 + 1).astype(np.float32)
    x[1, 5], x[2, 9], x[3, 3], x[0, 15] = np.nan, np.inf, 0.0, -np.inf
    return x, np.arange(4, dtype=np.float32).reshape(4, 1)


@pytest.mark.parametrize("mesh_shape,rules", LAYOUTS, ids=[str(r) for _, r in LAYOUTS])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_every_variant_equals_jax_and_the_interpreter(mesh_shape, rules, dtype):
    prog = program(mesh_shape, rules, dtype)
    x, one = inputs(dtype)
    with jax.enable_x64(True):
        wide = jnp.asarray(x, jnp.float64 if dtype == "f32" else jnp.int32)
        want = {name(*v): np.asarray(jax_scan(wide, *v)) for v in VARIANTS}
    want["one_excl"], want["one_incl"] = np.ones_like(one), one
    interpreted = mi.interpret(prog, x, one)
    for mode in ("explicit", "gspmd"):
        got = mi.compile(prog, mode=mode)(x, one)
        for result in prog.result_names:
            for value in (getattr(got, result), getattr(interpreted, result)):
                value = np.asarray(value)
                assert value.dtype == x.dtype, result
                if dtype == "i32":
                    np.testing.assert_array_equal(value, want[result], err_msg=f"{mode} {result}")
                else:
                    np.testing.assert_allclose(value, want[result], rtol=2e-6, atol=1e-6, err_msg=f"{mode} {result}")


@pytest.mark.parametrize("mesh_shape,rules", LAYOUTS[:3], ids=[str(r) for _, r in LAYOUTS[:3]])
@pytest.mark.parametrize("kind,exclusive,reverse", VARIANTS, ids=[name(*v) for v in VARIANTS])
def test_gradient_equals_jax_in_float64(mesh_shape, rules, kind, exclusive, reverse):
    """With zeros in the operand: cumprod's gradient divides by nothing."""
    with mi.Program("loss", mi.Mesh(mesh_shape), layout=rules) as prog:
        x, w = prog.argument("x", [B, V]), prog.argument("w", [B, V])
        prog.result(mi.reduce_sum(mi_scan(kind)(x, "v", exclusive=exclusive, reverse=reverse) * w), name="loss")
    r = np.random.default_rng(2)
    x, w = (r.normal(size=(4, 16)) * 0.6 + 0.8).astype(np.float32), r.normal(size=(4, 16)).astype(np.float32)
    x[1, 4] = x[2, 7] = x[2, 2] = 0.0
    loss, grad = mi.compile(mi.value_and_grad(prog, wrt=["x"]))(x, w)
    with jax.enable_x64(True):
        def f(x):
            return jnp.sum(jax_scan(x, kind, exclusive, reverse) * jnp.asarray(w, jnp.float64))
        want_loss, want_grad = jax.value_and_grad(f)(jnp.asarray(x, jnp.float64))
        np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(grad), np.asarray(want_grad), rtol=1e-5, atol=1e-5)


def _gathered_bytes(size: int) -> int:
    """Bytes of the all-gathers in the compiled HLO of a cumsum along a dim of `size` split over 8."""
    from meshir.lowering.runtime import hlo_collectives as hlo_stats
    with mi.Program("merge", mi.Mesh({"x": 8}), layout={"v": "x"}) as prog:
        prog.result(mi.cumsum(prog.argument("x", [B, mi.Dim("v", size)]), "v"))
    exe = mi.compile(prog)
    found = hlo_stats.parse_collectives(exe.compiled_hlo_text())
    assert found and {c.kind for c in found} == {"all-gather"}
    recorded = [c for c in exe.compile_report.collectives]
    assert [c.detail for c in recorded] == ["cumsum block totals, dim=v"]
    assert recorded[0].bytes_per_device == 7 * B.size * 4
    return sum(c.operand_bytes for c in found)


def test_a_split_scan_moves_bytes_independent_of_the_dim():
    small, large = _gathered_bytes(64), _gathered_bytes(2048)
    assert small == large == B.size * 4  # each device's block total at every b, f32


def test_bad_input_is_a_located_error():
    with mi.Program("bad", mi.Mesh({"x": 2})) as prog:
        x = prog.argument("x", [B, V])
        flags = prog.argument("flags", [B, V], "i1")
        cases = [
            (lambda: mi.cumsum(x, "w"), "'w' is not a dimension"),
            (lambda: mi.cumprod(x, "v", exclusive=1), "exclusive of mi.cumprod"),
            (lambda: mi.cumsum(x, "v", reverse="yes"), "reverse of mi.cumsum"),
            (lambda: mi.cumsum(flags, "v"), "cumsum needs a numeric operand, got i1"),
            (lambda: mi.cumprod(np.ones(3), "v"), "MeshIR Tensor"),
        ]
        for make, message in cases:
            with pytest.raises(mi.MeshIRError, match=message) as info:
                make()
            assert "test_cumulative.py" in str(info.value)
