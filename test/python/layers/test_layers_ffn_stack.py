"""meshir.layers.ffn (GELU and ReLU with biases, gated SwiGLU without, GeGLU with) and
meshir.layers.stacked (identical layers as one scan) against NumPy float64 references,
through mi.interpret and compiled on a 4x2 mesh; stack_params stacks per-layer values and
refuses layers whose parameters differ."""
from __future__ import annotations

import inspect

import numpy as np

import layers_reference as R
import meshir as mi
from layers_support import close, evaluations, mesh, raised, values
from meshir import layers as L
from misuse_world import check_located

D = mi.Dim
B, S, M, F = 4, 8, 8, 16
b, l, m, f = D("batch", B), D("length", S), D("d_model", M), D("d_ff", F)


def test_ffn_activations_biases_and_gates():
    assert list(L.ffn_params(m, f)) == ["w1", "b1", "w2", "b2"]
    assert list(L.ffn_params(m, f, bias=False, gated=True)) == ["w1", "w_gate", "w2"]
    dims = {**L.ffn_params(m, f), "w_gate": [m, f]}
    with mi.Program("ffn", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, ds) for n, ds in dims.items()}
        plain = {n: p[n] for n in ("w1", "b1", "w2", "b2")}
        prog.result(L.ffn(x, plain, "gelu"), name="gelu")
        prog.result(L.ffn(x, plain, "relu"), name="relu")
        prog.result(L.ffn(x, plain), name="default")  # GELU
        prog.result(L.ffn(x, {n: p[n] for n in ("w1", "w_gate", "w2")}), name="swiglu")  # silu when gated
        prog.result(L.ffn(x, p, "gelu"), name="geglu")
    rng = np.random.default_rng(0)
    xv = (rng.standard_normal((B, S, M)) * 2).astype(np.float32)
    p = values(rng, dims)
    w1, b1, w2, b2, wg = (p[n] for n in ("w1", "b1", "w2", "b2", "w_gate"))
    gelu = R.ffn(xv, w1, w2, b1, b2, activation="gelu")
    want = (gelu, R.ffn(xv, w1, w2, b1, b2, activation="relu"), gelu,
            R.ffn(xv, w1, w2, w_gate=wg, activation="silu"), R.ffn(xv, w1, w2, b1, b2, w_gate=wg, activation="gelu"))
    layouts = {"data": {"batch": "x"}, "model": {"d_ff": "y"}, "2d": {"batch": "x", "d_ff": "y"}, "replicated": {}}
    for label, got in evaluations(prog, layouts, xv, *p.values()):
        for name, g, w in zip(("gelu", "relu", "default", "swiglu", "geglu"), got, want):
            close(g, w, f"{label} {name}")


# -- stacked layers ----------------------------------------------------------------------------

LAYERS = 3
ONE_LAYER = {"scale": [m], "w1": [m, f], "w2": [f, m]}


def _block(h, p, i=None):
    """A pre-norm residual FFN; with the layer index, its update scaled by index + 1."""
    update = L.ffn(L.rms_norm(h, {"scale": p["scale"]}), {"w1": p["w1"], "w2": p["w2"]})
    return h + (update if i is None else update * (mi.cast(i, "f32") + 1.0))


def _block_reference(h, p, i=None):
    update = R.ffn(R.rms_norm(h, p["scale"]), p["w1"], p["w2"])
    return h + (update if i is None else update * (i + 1))


def test_stacked_layers_equal_the_layers_one_by_one():
    layers = D("layers", LAYERS)
    dims = L.stacked_params(ONE_LAYER, layers)
    assert {n: [d.name for d in ds] for n, ds in dims.items()} == {
        "scale": ["layers", "d_model"], "w1": ["layers", "d_model", "d_ff"], "w2": ["layers", "d_ff", "d_model"]}
    with mi.Program("stack", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, ds) for n, ds in dims.items()}
        plain = L.stacked(_block, x, p)
        assert plain.names == x.names
        prog.result(plain, name="plain")
        prog.result(L.stacked(_block, x, p, with_index=True), name="indexed")
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((B, S, M)).astype(np.float32)
    per_layer = [values(rng, ONE_LAYER) for _ in range(LAYERS)]
    for q in per_layer:
        q["scale"] += 1.0
    stacked = L.stack_params(per_layer)
    assert list(stacked) == list(ONE_LAYER)
    for n, v in stacked.items():
        np.testing.assert_array_equal(v, np.stack([q[n] for q in per_layer]))
    plain, indexed = xv.astype(np.float64), xv.astype(np.float64)
    for i, q in enumerate(per_layer):
        plain = _block_reference(plain, q)
        indexed = _block_reference(indexed, q, i)
    assert not np.allclose(plain, indexed, atol=1e-2)  # the index reaches the layer
    layouts = {"data": {"batch": "x"}, "2d": {"batch": "x", "d_ff": "y"}, "replicated": {}}
    for label, got in evaluations(prog, layouts, xv, *stacked.values()):
        close(got[0], plain, f"{label} plain")
        close(got[1], indexed, f"{label} with_index")


def test_stack_params_refuses_layers_that_differ():
    rng = np.random.default_rng(2)
    ok = [values(rng, ONE_LAYER) for _ in range(3)]
    wrong_shape = [*ok[:2], {**ok[2], "w1": np.zeros((M, F + 1), np.float32)}]
    line = inspect.currentframe().f_lineno + 1
    error = raised(lambda: L.stack_params(wrong_shape))
    check_located(error, __file__, line, ("meshir.layers.stack_params", "layer 2", f"(8, {F + 1})", f"(8, {F})"),
                  kind=mi.MeshIRValueError)
    missing = [ok[0], {n: ok[1][n] for n in ("scale", "w1")}]
    line = inspect.currentframe().f_lineno + 1
    error = raised(lambda: L.stack_params(missing))
    check_located(error, __file__, line, ("meshir.layers.stack_params", "layer 1", "'w2'"), kind=mi.MeshIRValueError)


def test_stack_params_of_no_layers_is_a_meshir_error():
    line = inspect.currentframe().f_lineno + 1
    error = raised(lambda: L.stack_params([]))
    check_located(error, __file__, line, ("meshir.layers.stack_params",))


def test_stack_params_ignores_the_order_of_the_names():
    rng = np.random.default_rng(3)
    first = values(rng, ONE_LAYER)
    second = dict(reversed(list(values(rng, ONE_LAYER).items())))
    stacked = L.stack_params([first, second])
    for n in ONE_LAYER:
        np.testing.assert_array_equal(stacked[n], np.stack([first[n], second[n]]))
