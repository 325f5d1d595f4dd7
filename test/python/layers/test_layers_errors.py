"""Bad input to meshir.layers: each is a MeshIRError located at the test's own line (the
layer's caller), naming the layer and the offending values: the mixture of experts' options,
experts that the layout cannot split, tensors without the documented dims, parameters
missing from the mapping, and values that are not named Tensors."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import meshir as mi
from layers_support import mesh, raised
from meshir import layers as L
from misuse_world import check_located

D = mi.Dim
b, l, m, h, k, f, e, v = (D("batch", 8), D("length", 16), D("d_model", 8), D("heads", 4), D("d_k", 4),
                          D("d_ff", 8), D("experts", 4), D("vocab", 16))


def _here() -> int:
    """The line after the caller's."""
    return inspect.currentframe().f_back.f_lineno + 1


def _arguments(prog, dims: dict) -> dict:
    return {n: prog.argument(n, ds) for n, ds in dims.items()}


# -- the mixture of experts' options ---------------------------------------------------------

MOE_OPTIONS = [
    ("k-above-experts", dict(k=5), ("k=5", "number of experts (4)")),
    ("k-zero", dict(k=0), ("k must be a positive int", "got 0")),
    ("k-not-int", dict(k=2.0), ("k must be a positive int", "got 2.0")),
    ("capacity-factor-zero", dict(capacity_factor=0), ("capacity factor", "> 0", "got 0")),
    ("capacity-factor-negative", dict(capacity_factor=-1), ("capacity factor", "got -1")),
    ("capacity-factor-inf", dict(capacity_factor=float("inf")), ("capacity factor", "got inf")),
    ("aux-loss-weight-negative", dict(aux_loss_weight=-0.1), ("auxiliary loss weight", ">= 0", "got -0.1")),
    ("unknown-second-policy", dict(second_policy="top"), ("second_policy 'top'", "all, random")),
    ("random-without-seed", dict(second_policy="random"), ("second_policy='random' needs a seed",)),
    ("random-threshold-zero", dict(second_policy="random", seed=1, second_threshold=0.0),
     ("second_threshold must be > 0", "got 0.0")),
    ("group-size-not-dividing", dict(group_size=24), ("group_size", "divides the 128 tokens", "got 24")),
    ("group-size-zero", dict(group_size=0), ("group_size", "got 0")),
    ("unknown-activation", dict(activation="tanh"), ("unknown activation 'tanh'", "relu")),
]


@pytest.mark.parametrize("kwargs, fragments", [c[1:] for c in MOE_OPTIONS], ids=[c[0] for c in MOE_OPTIONS])
def test_moe_options(kwargs, fragments):
    with mi.Program("moe_options", mesh()) as prog:
        x, p = prog.argument("x", [b, l, m]), _arguments(prog, L.moe_params(m, e, f))
        line = _here()
        error = raised(lambda: L.moe(x, p, **kwargs))
    check_located(error, __file__, line, ("meshir.layers.moe", *fragments), kind=mi.MeshIRValueError)


def test_experts_the_layout_cannot_split():
    with mi.Program("moe_six_experts", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = _arguments(prog, L.moe_params(m, D("experts", 6), f))
        prog.result(L.moe(x, p).output, name="y")
    error = raised(lambda: mi.compile(prog, layout={"batch": "x", "experts": "x"}))
    message = str(error)
    assert __file__ in message, message
    for fragment in ("experts:x", "'experts' of size 6", "4 devices"):
        assert fragment in message, message


def test_moe_tensors_and_parameters():
    with mi.Program("moe_bad", mesh()) as prog:
        x, p = prog.argument("x", [b, l, m]), _arguments(prog, L.moe_params(m, e, f))
        extra = prog.argument("extra", [b, l, m, D("other", 2)])
        three = prog.argument("three", [m, D("experts_unsplit", 3)])
        w2_out = prog.argument("w2_out", [e, f, D("d_out", 8)])
        cases = [
            (lambda: L.moe(extra, p), ("the input", "other=2", "'batch', 'length', 'd_model'"),
             mi.MeshIRValueError),
            (lambda: L.moe(x, {"w1": p["w1"], "w2": p["w2"]}), ("no parameter 'router' among 'w1', 'w2'",),
             mi.MeshIRValueError),
            (lambda: L.moe(x, {**p, "router": three}), ("scores 3 experts", "has 4"), mi.MeshIRValueError),
            (lambda: L.moe(x, {**p, "w2": w2_out}), ("the parameter 'w2'", "d_out=8", "'experts', 'd_ff', 'd_model'"),
             mi.MeshIRValueError),
            (lambda: L.moe(np.zeros((8, 16, 8), np.float32), p), ("the input must be a named Tensor", "ndarray"),
             mi.MeshIRTypeError),
            (lambda: L.moe(x, {**p, "w1": 1.5}), ("parameter 'w1' must be a named Tensor", "float"),
             mi.MeshIRTypeError),
        ]
        for call, fragments, kind in cases:
            check_located(raised(call), __file__, inspect.getsourcelines(call)[1],
                          ("meshir.layers.moe", *fragments), kind=kind)


# -- attention, ffn, norms, embeddings, stacks -----------------------------------------------------

def test_attention_tensors_and_parameters():
    with mi.Program("attention_bad", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = _arguments(prog, L.attention_params(m, h, k))
        hidden = prog.argument("hidden", [b, l, D("hidden", 8)])
        wq_dv = prog.argument("wq_dv", [m, h, D("d_v", 4)])
        x6 = prog.argument("x6", [b, l, D("d_model", 6)])
        cases = [
            (lambda: L.attention(hidden, p), ("the input", "has no dim 'd_model'"), mi.MeshIRValueError),
            (lambda: L.attention(x, {**p, "wq": wq_dv}),
             ("the parameter 'wq'", "d_v=4", "'d_model', 'heads', 'd_k'"), mi.MeshIRValueError),
            (lambda: L.attention(x, p, kv_heads="kv_heads"),
             ("the parameter 'wq'", "'d_model', 'kv_heads', 'heads', 'd_k'"), mi.MeshIRValueError),
            (lambda: L.attention(x6, p), ("dim 'd_model' is 6 in the input", "8 in the parameter 'wq'"),
             mi.MeshIRValueError),
            (lambda: L.attention(x, {n: p[n] for n in ("wq", "wk", "wv")}),
             ("no parameter 'wo' among 'wq', 'wk', 'wv'",), mi.MeshIRValueError),
            (lambda: L.attention(np.zeros((8, 16, 8), np.float32), p), ("the input must be a named Tensor",),
             mi.MeshIRTypeError),
            (lambda: L.attention(x, {**p, "wk": np.zeros((8, 4, 4))}),
             ("parameter 'wk' must be a named Tensor", "ndarray"), mi.MeshIRTypeError),
            (lambda: L.attention(x, p, memory=[1, 2]), ("the memory must be a named Tensor", "list"),
             mi.MeshIRTypeError),
            (lambda: L.attention(x, list(p.values())), ("the parameters must be a mapping", "list"),
             mi.MeshIRTypeError),
        ]
        for call, fragments, kind in cases:
            check_located(raised(call), __file__, inspect.getsourcelines(call)[1],
                          ("meshir.layers.attention", *fragments), kind=kind)


def test_ffn_tensors_and_parameters():
    with mi.Program("ffn_bad", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = _arguments(prog, L.ffn_params(m, f))
        hidden = prog.argument("hidden", [b, l, D("hidden", 8)])
        w2_out = prog.argument("w2_out", [f, D("d_out", 8)])
        cases = [
            (lambda: L.ffn(hidden, p), ("the input", "has no dim 'd_model'"), mi.MeshIRValueError),
            (lambda: L.ffn(x, {**p, "w2": w2_out}), ("the parameter 'w2'", "d_out=8", "'d_ff', 'd_model'"),
             mi.MeshIRValueError),
            (lambda: L.ffn(x, {"w1": p["w1"], "b1": p["b1"]}), ("no parameter 'w2' among 'w1', 'b1'",),
             mi.MeshIRValueError),
            (lambda: L.ffn(x, p, "tanh"), ("unknown activation 'tanh'", "gelu, relu, silu"), mi.MeshIRValueError),
            (lambda: L.ffn("x", p), ("the input must be a named Tensor", "str"), mi.MeshIRTypeError),
        ]
        for call, fragments, kind in cases:
            check_located(raised(call), __file__, inspect.getsourcelines(call)[1],
                          ("meshir.layers.ffn", *fragments), kind=kind)


def test_norm_and_embedding_tensors_and_parameters():
    with mi.Program("norms_bad", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        hidden = prog.argument("hidden", [b, l, D("hidden", 8)])
        scale = prog.argument("scale", [m])
        wide = prog.argument("wide", [m, f])
        tokens = prog.argument("tokens", [b, l], dtype="i32")
        table = prog.argument("table", [v, m])
        words = prog.argument("words", [D("words", 16), m])
        table6 = prog.argument("table6", [v, D("d_model", 6)])
        cases = [
            (lambda: L.layer_norm(hidden, {"scale": scale}), "layer_norm", ("the input", "has no dim 'd_model'"),
             mi.MeshIRValueError),
            (lambda: L.layer_norm(x, {}), "layer_norm", ("no parameter 'scale' among none",), mi.MeshIRValueError),
            (lambda: L.layer_norm(x.type, {"scale": scale}), "layer_norm", ("the input must be a named Tensor",),
             mi.MeshIRTypeError),
            (lambda: L.rms_norm(hidden, {"scale": scale}), "rms_norm", ("has no dim 'd_model'",),
             mi.MeshIRValueError),
            (lambda: L.rms_norm(x, {"scale": wide}), "rms_norm", ("the scale", "d_ff=8", "'d_model'"),
             mi.MeshIRValueError),
            (lambda: L.embed(np.zeros((8, 16), np.int32), {"embed": table}), "embed",
             ("the tokens must be a named Tensor",), mi.MeshIRTypeError),
            (lambda: L.embed(tokens, {"embed": words}), "embed", ("the table 'embed'", "has no dim 'vocab'"),
             mi.MeshIRValueError),
            (lambda: L.embed(tokens, {"table": table}), "embed", ("no parameter 'embed' among 'table'",),
             mi.MeshIRValueError),
            (lambda: L.tied_logits(x, table6), "tied_logits", ("dim 'd_model' is 8 in the input", "6 in the table"),
             mi.MeshIRValueError),
            (lambda: L.tied_logits(hidden, table), "tied_logits", ("has no dim 'd_model'",), mi.MeshIRValueError),
        ]
        for call, layer, fragments, kind in cases:
            check_located(raised(call), __file__, inspect.getsourcelines(call)[1],
                          (f"meshir.layers.{layer}", *fragments), kind=kind)


@pytest.mark.parametrize("seed", ["abc", 1.5], ids=["str", "float"])
def test_moe_seed_that_is_no_int(seed):
    with mi.Program("moe_seed", mesh()) as prog:
        x, p = prog.argument("x", [b, l, m]), _arguments(prog, L.moe_params(m, e, f))
        line = _here()
        error = raised(lambda: L.moe(x, p, second_policy="random", seed=seed))
    check_located(error, __file__, line, ("meshir.layers.moe", repr(seed)))


def test_rms_norm_negative_epsilon():
    with mi.Program("rms_epsilon", mesh()) as prog:
        x, scale = prog.argument("x", [b, l, m]), prog.argument("scale", [m])
        line = _here()
        error = raised(lambda: L.rms_norm(x, {"scale": scale}, epsilon=-1.0))
    check_located(error, __file__, line, ("epsilon", "-1.0"))


def test_layer_norm_scale_without_the_dim():
    with mi.Program("layer_norm_scale", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        scale = prog.argument("scale", [f])
        line = _here()
        error = raised(lambda: L.layer_norm(x, {"scale": scale}))
    check_located(error, __file__, line, ("meshir.layers.layer_norm", "d_ff=8", "'d_model'"))


def test_stacked_parameters():
    layers = D("layers", 3)
    with mi.Program("stacked_bad", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        w = prog.argument("w", [layers, m, f])
        unstacked = prog.argument("unstacked", [m, f])
        four = prog.argument("four", [D("layers", 4), f, m])

        def layer(h, p):
            return h

        cases = [
            (lambda: L.stacked(layer, x, {}), ("non-empty mapping", "{}"), mi.MeshIRTypeError),
            (lambda: L.stacked(layer, x, {"w": unstacked}), ("parameter 'w'", "has no dim 'layers'"),
             mi.MeshIRValueError),
            (lambda: L.stacked(layer, x, {"w1": w, "w2": four}), ("different 'layers' sizes", "'w1': 3", "'w2': 4"),
             mi.MeshIRValueError),
            (lambda: L.stacked(layer, 3.0, {"w": w}), ("the input must be a named Tensor", "float"),
             mi.MeshIRTypeError),
        ]
        for call, fragments, kind in cases:
            check_located(raised(call), __file__, inspect.getsourcelines(call)[1],
                          ("meshir.layers.stacked", *fragments), kind=kind)
