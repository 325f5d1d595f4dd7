"""mi.remat: gradients through rematerialized calls equal jax.grad of the same computation
(float64), interpreted and compiled on several meshes and layouts, with NaN/inf inputs and
size-1 dims; a call is differentiated without inlining; bad input is a located error."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi



@pytest.fixture(autouse=True)
def float64():
    """jax in float64 for these tests only (the oracle and the f64 arguments)."""
    with jax.enable_x64(True):
        yield

LAYOUTS = [
    ({"x": 4, "y": 2}, {"batch": "x", "d_ff": "y"}),
    ({"x": 4, "y": 2}, {"batch": ("x", "y")}),
    ({"x": 2}, {"d_ff": "x"}),
]


def _layer(x, w1, w2, dims):
    b, m, f = dims
    h = mi.tanh(mi.einsum(x, w1, output=[b, f]))
    return x + mi.einsum(h, w2, output=[b, m])


def _program(mesh, dims, layers=2, remat=True, nested=False):
    b, m, f = dims
    block = mi.remat(_layer) if remat else _layer
    if nested:  # two layers in one rematerialized block, each itself rematerialized
        inner = block
        block = mi.remat(lambda x, ws, dims: inner(inner(x, *ws[0], dims), *ws[1], dims))
    with mi.Program("p", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, m], "f64")
        ws = [(prog.argument(f"w1_{i}", [m, f], "f64"), prog.argument(f"w2_{i}", [f, m], "f64")) for i in range(layers)]
        if nested:
            x = block(x, ws, dims)
        else:
            for w1, w2 in ws:
                x = block(x, w1, w2, dims)
        prog.result(mi.reduce_sum(x * x))
    return prog


def _inputs(sizes, layers=2, special=False):
    rng = np.random.default_rng(0)
    b, m, f = sizes
    out = {"x": rng.standard_normal((b, m))}
    for i in range(layers):
        out[f"w1_{i}"], out[f"w2_{i}"] = rng.standard_normal((m, f)) * 0.5, rng.standard_normal((f, m)) * 0.5
    if special:
        out["x"][0, 0], out["x"][-1, -1] = np.nan, np.inf
    return out


def _reference(inputs, layers=2):
    def loss(x, *ws):
        for i in range(layers):
            x = x + jnp.tanh(x @ ws[2 * i]) @ ws[2 * i + 1]
        return jnp.sum(x * x)

    names = ["x"] + [f"w{k}_{i}" for i in range(layers) for k in (1, 2)]
    grads = jax.grad(loss, argnums=tuple(range(len(names))))(*[inputs[n] for n in names])
    return dict(zip(names, grads))


def _check(got, names, want):
    for name, g in zip(names, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(want[name.removeprefix("grad_")]), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("mesh, layout", LAYOUTS)
def test_remat_gradients_equal_jax_grad_on_every_layout(mesh, layout):
    dims = (mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 6))
    g = mi.grad(_program(mesh, dims))
    inputs = _inputs((8, 4, 6))
    want = _reference(inputs)
    _check(mi.interpret(g, **inputs), g.result_names, want)
    _check(mi.compile(g, layout=layout)(**inputs), g.result_names, want)


def test_remat_with_nan_inf_and_size_one_dims_matches_jax():
    dims = (mi.Dim("batch", 4), mi.Dim("d_model", 1), mi.Dim("d_ff", 2))
    g = mi.grad(_program({"x": 4, "y": 2}, dims))
    inputs = _inputs((4, 1, 2), special=True)
    got = mi.compile(g, layout={"batch": "x", "d_ff": "y"})(**inputs)
    _check(got, g.result_names, _reference(inputs))


def test_nested_remat_and_plain_calls_give_the_same_gradients():
    dims = (mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 6))
    inputs = _inputs((8, 4, 6))
    want = _reference(inputs)
    for prog in (_program({"x": 4, "y": 2}, dims, nested=True), _program({"x": 4, "y": 2}, dims, remat=False)):
        g = mi.grad(prog)
        _check(mi.interpret(g, **inputs), g.result_names, want)


def test_remat_keeps_its_call_until_autodiff_and_recomputes_behind_barriers():
    dims = (mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 6))
    prog = _program({"x": 4, "y": 2}, dims)
    assert str(prog.module).count("{mtf.remat}") == 2
    g = mi.grad(prog)
    text = str(g.module)
    assert "func.call" not in text and "call @" not in text  # the gradient program is flat
    assert text.count('"mtf.optimization_barrier"') == 2 * 3  # each layer's three inputs
    assert text.count('"mtf.einsum"') > str(mi.grad(_program({"x": 4, "y": 2}, dims, remat=False)).module).count('"mtf.einsum"')


def test_remat_without_float_inputs_is_a_located_error():
    ids_dim = mi.Dim("batch", 4)
    block = mi.remat(lambda ids: mi.cast(ids, "f32") * 2.0)
    with mi.Program("p", mi.Mesh({"x": 2})) as prog:
        ids = prog.argument("ids", [ids_dim], "i32")
        with pytest.raises(mi.MeshIRError, match=r"test_remat\.py:\d+:\d+: error: mi\.remat\(lambda\): no float Tensor "
                                                 r"argument to differentiate"):
            block(ids)
        prog.result(mi.reduce_sum(mi.cast(ids, "f32")))


def test_remat_of_a_value_from_outside_the_block_is_a_located_error():
    d = mi.Dim("batch", 4)
    with mi.Program("p", mi.Mesh({"x": 2})) as prog:
        x = prog.argument("x", [d])
        w = prog.argument("w", [d])
        with pytest.raises(mi.MeshIRError, match=r"test_remat\.py:\d+:\d+: error: .*different Programs"):
            mi.remat(lambda a: a * w)(x)
        prog.result(mi.reduce_sum(x))


def test_remat_of_a_block_that_scans_recomputes_it_and_equals_the_plain_gradient():
    """A rematerialized function holding an mi.scan (a pipeline stage's layers): building
    its forward-with-residuals once read the scan's results after the scan's VJP had rebuilt
    it (to save its carries), a KeyError or a crash in MLIR."""
    D = mi.Dim
    b, d, e, n = D("batch", 4), D("d", 8), D("e", 8), D("layers", 3)

    def layer(h, w):
        return mi.tanh(mi.einsum(mi.rename(h, "d", "e"), w, output=[b, d])), None

    def block(x, ws):
        return mi.scan(layer, x, ws, dim="layers")[0]

    def program(remat: bool):
        with mi.Program("scan_in_remat", mi.Mesh({"x": 2})) as prog:
            x = prog.argument("x", [b, d])
            ws = prog.argument("ws", [n, e, d])
            run = mi.remat(block) if remat else block
            y = run(run(x, ws), ws)
            prog.result(mi.mean(y * y), name="loss")
        return prog

    rng = np.random.default_rng(0)
    x, ws = rng.standard_normal((4, 8)).astype(np.float32), (rng.standard_normal((3, 8, 8)) * 0.4).astype(np.float32)
    plain = mi.value_and_grad(program(False), wrt=["x", "ws"])
    remat = mi.value_and_grad(program(True), wrt=["x", "ws"])
    text = str(remat.module)
    assert text.count('"mtf.optimization_barrier"') == 2 * 2  # each call's two inputs, recomputed
    assert text.count('"mtf.scan"') > str(plain.module).count('"mtf.scan"')
    want = mi.interpret(plain.module, x, ws)
    for layout in ({"batch": "x"}, {}):
        got = mi.compile(remat, layout=layout)(x, ws)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6)
