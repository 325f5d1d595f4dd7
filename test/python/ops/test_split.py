"""`mi.split` / `mtf.split`, the first op with several results, added through the op registry:
values against NumPy (NaN and infinities, pieces of size 1, one piece) in the interpreter and
compiled in both modes on split and unsplit dims, the layout of pieces the axes do not divide,
the gradient of every piece against jax.grad in float64, and each bad input as a located
MeshIRError. Every layout on every mesh: op_cases.py (`split_*`)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi
from misuse_world import check_located

B, S = mi.Dim("b", 8), mi.Dim("s", 16)


def _inputs() -> np.ndarray:
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    return x


def _program(sizes, mesh=None) -> mi.Program:
    with mi.Program("split", mesh or mi.Mesh({"x": 4, "y": 2})) as prog:
        x = prog.argument("x", [B, S])
        for i, piece in enumerate(mi.split(x, "s", sizes)):
            prog.result(piece, name=f"piece{i}")
    return prog


def _numpy_pieces(x, sizes):
    return np.split(x, np.cumsum(sizes)[:-1], axis=1)


@pytest.mark.parametrize("sizes", [[4, 8, 4], [1, 14, 1], [16], [3, 13]], ids=str)
def test_interpreter_equals_numpy(sizes):
    x = _inputs()
    got = mi.interpret(_program(sizes), x=x)
    got = got if isinstance(got, tuple) else (got,)
    want = _numpy_pieces(x, sizes)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # NaN and -0.0 in place: a copy, bit for bit
        assert np.array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
@pytest.mark.parametrize("layout", [{}, {"s": "x"}, {"s": ("x", "y")}, {"b": "x", "s": "y"}], ids=str)
def test_compiled_equals_numpy_on_split_and_unsplit_dims(layout, mode):
    x, sizes = _inputs(), [8, 4, 4]
    exe = mi.compile(_program(sizes), layout=layout, mode=mode)
    for got, want in zip(exe(x=x), _numpy_pieces(x, sizes)):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_a_piece_the_axes_do_not_divide_comes_out_without_them():
    """s:x on 4 devices: the pieces of 8 and 4 rows stay split, the one of 2 rows is whole."""
    x, sizes = _inputs(), [8, 6, 2]
    exe = mi.compile(_program(sizes), layout={"s": "x"})
    specs = [tuple(s.spec) for s in exe.out_shardings]
    assert specs[0] == (None, "x") and specs[1] == (None, None) and specs[2] == (None, None), specs
    for got, want in zip(exe(x=x), _numpy_pieces(x, sizes)):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_split_then_concat_is_the_identity():
    with mi.Program("round_trip", mi.Mesh({"x": 4})) as prog:
        x = prog.argument("x", [B, S])
        prog.result(mi.concat(list(mi.split(x, "s", [5, 3, 8])), "s"), name="y")
    x = _inputs()
    np.testing.assert_array_equal(np.asarray(mi.compile(prog, layout={"s": "x"})(x=x)), x)


def test_gradient_of_every_piece_equals_jax():
    """loss = sum(w0 * p0) + sum(w2 * p2) (p1 unused: a zero cotangent) on a split dim."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16))
    w0, w2 = rng.standard_normal((8, 4)), rng.standard_normal((8, 10))
    with mi.Program("loss", mi.Mesh({"x": 2, "y": 2})) as prog:
        xt = prog.argument("x", [B, S], "f64")
        p0, _, p2 = mi.split(xt, "s", [4, 2, 10])
        loss = mi.reduce_sum(p0 * mi.constant(w0, p0.dims, dtype="f64")) + \
            mi.reduce_sum(p2 * mi.constant(w2, p2.dims, dtype="f64"))
        prog.result(loss, name="loss")
    grad = mi.value_and_grad(prog)
    with jax.enable_x64(True):
        jax_value, jax_grad = jax.value_and_grad(lambda x: jnp.sum(w0 * x[:, :4]) + jnp.sum(w2 * x[:, 6:]))(x)
    value, got = mi.interpret(grad, x=x)
    np.testing.assert_allclose(value, jax_value, rtol=1e-12)
    np.testing.assert_allclose(got, jax_grad, rtol=1e-12, atol=0)
    assert not np.any(got[:, 4:6]), "the unused piece gets no gradient"
    value, got = mi.compile(grad, layout={"s": "x", "b": "y"})(x=x)
    np.testing.assert_allclose(np.asarray(got), jax_grad, rtol=1e-12)


def _split_call(sizes, dim="s"):
    with mi.Program("bad", mi.Mesh({"x": 2})) as prog:
        x = prog.argument("x", [B, S])
        mi.split(x, dim, sizes)  # the line the error must name


@pytest.mark.parametrize("sizes,fragments", [
    ([4, 4], ["'mtf.split' of 's' (size 16)", "[4, 4] sum to 8, not 16"]),
    ([16, 0], ["piece #1's size must be at least 1, got 0"]),
    ([20, -4], ["piece #1's size must be at least 1, got -4"]),
    ([], ["the sizes [] sum to 0, not 16"]),
    (3, ["3 equal pieces do not divide it"]),
    (0, ["the number of pieces must be at least 1, got 0"]),
    ([4.0, 12], ["must be an integer"]),
], ids=str)
def test_bad_sizes_are_located_errors_naming_the_values(sizes, fragments):
    with pytest.raises(mi.MeshIRError) as info:
        _split_call(sizes)
    check_located(info.value, __file__, _split_call.__code__.co_firstlineno + 3, fragments)


def test_an_unknown_dim_is_a_located_error():
    with pytest.raises(mi.MeshIRError) as info:
        _split_call(2, dim="t")
    check_located(info.value, __file__, _split_call.__code__.co_firstlineno + 3, ["'t'"])
