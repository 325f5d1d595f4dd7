"""meshir.layers.pipeline: GPipe's schedule in SPMD form. The pipelined stack computes the
loss and gradients of the same stack unpipelined, on layouts that also split batch and
heads; its per-device matmul FLOPs are (M + P - 1) / M of the same model with the stage axis
used for data parallelism (the schedule's bubble, read from XLA's compiled HLO); along the
stage axis only collective permutes move activations; re-materialization trades one more
forward pass for activation memory; bad input is a clear error."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import meshir as mi
import meshir.layers as L

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from meshir.lowering.runtime import hlo_collectives as hlo_stats

D = mi.Dim
B, S, M_, H, K, F, LAYERS, P = 16, 8, 32, 4, 8, 64, 4, 2
b, l, m, h, k, f = D("batch", B), D("length", S), D("d_model", M_), D("heads", H), D("d_k", K), D("d_ff", F)
MESH = mi.Mesh({"stage": P, "x": 2, "y": 2})
LAYER = {**{f"ln_{n}": d for n, d in L.norm_params(m).items()}, **L.attention_params(m, h, k), **L.ffn_params(m, f)}
RULES = {"stage": "stage", "batch": "x", "heads": "y", "d_ff": "y"}


def layer(x, p):
    """A pre-norm Transformer layer (one layer norm for both halves, to stay small)."""
    norm = {"scale": p["ln_scale"], "bias": p["ln_bias"]}
    x = x + L.attention(L.layer_norm(x, norm), p)
    return x + L.ffn(L.layer_norm(x, norm), p)


def per_layer_values(seed=0):
    rng = np.random.default_rng(seed)
    return [{n: (rng.standard_normal([d.size for d in ds]) * (0.3 if n.startswith("w") else 0.1)
                 + (1.0 if n == "ln_scale" else 0.0)).astype(np.float32) for n, ds in LAYER.items()}
            for _ in range(LAYERS)]


def pipelined(microbatches, remat=False):
    with mi.Program("pipelined", MESH) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, d) for n, d in L.pipeline_params(LAYER, D("stage", P),
                                                                  D("layers", LAYERS // P)).items()}
        y = L.pipeline(layer, x, p, microbatches=microbatches, axis="stage", remat=remat)
        prog.result(L.last_stage(mi.mean(y * y, output=[D("stage", P)])), name="loss")
    return prog


def unpipelined():
    """The same stack as one scan over all layers."""
    with mi.Program("plain", MESH) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, [D("layers", LAYERS), *d]) for n, d in LAYER.items()}
        y = L.stacked(layer, x, p)
        prog.result(mi.mean(y * y), name="loss")
    return prog


def inputs(seed=0):
    x = np.random.default_rng(seed + 10).standard_normal((B, S, M_)).astype(np.float32)
    return x, per_layer_values(seed)


@pytest.mark.parametrize("microbatches, remat, rules", [
    (4, False, RULES),
    (2, True, RULES),
    (1, False, {"stage": "stage", "batch": ("x", "y")}),
    (8, False, {"stage": "stage", "heads": ("x", "y"), "d_ff": "x"}),
])
def test_same_loss_and_gradients_as_the_unpipelined_stack(microbatches, remat, rules):
    x, layers = inputs()
    pipe = mi.compile(mi.value_and_grad(pipelined(microbatches, remat), wrt=["x", *LAYER]), layout=rules)
    got = pipe(x, *L.stage_params(layers, P).values())
    plain = unpipelined()
    want = mi.interpret(mi.value_and_grad(plain, wrt=["x", *LAYER]).module, x, *L.stack_params(layers).values())
    np.testing.assert_allclose(float(got[0]), float(want[0]), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]), want[1], rtol=1e-4, atol=1e-6, err_msg="grad x")
    for name, g, w in zip(LAYER, got[2:], want[2:]):  # f32 sums of B*S terms in another order: atol 2e-6
        np.testing.assert_allclose(np.asarray(g).reshape(np.shape(w)), w, rtol=1e-4, atol=2e-6, err_msg=name)


def implicit_ffn(x, p):
    """A layer written for one stage with implicit einsums (no output=): inside a pipeline
    both operands carry `stage`, which the einsums keep (mapped_dims) instead of summing."""
    return x + mi.einsum(mi.relu(mi.einsum(x, p["w_in"])), p["w_out"])


def test_implicit_einsums_in_a_stage_keep_the_stage_dim():
    params = {"w_in": [m, f], "w_out": [f, m]}
    rng = np.random.default_rng(3)
    layers = [{n: (rng.standard_normal([d.size for d in ds]) * 0.2).astype(np.float32) for n, ds in params.items()}
              for _ in range(LAYERS)]
    x = rng.standard_normal((B, S, M_)).astype(np.float32)
    with mi.Program("pipelined_implicit", MESH) as prog:
        xs = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, d) for n, d in L.pipeline_params(params, D("stage", P), D("layers", LAYERS // P)).items()}
        y = L.pipeline(implicit_ffn, xs, p, microbatches=2, axis="stage", remat=True)
        assert list(y.names) == ["stage", "batch", "length", "d_model"]
        prog.result(L.last_stage(mi.mean(y * y, output=[D("stage", P)])), name="loss")
    got = mi.compile(mi.value_and_grad(prog, wrt=["w_in"]), layout=RULES)(x, *L.stage_params(layers, P).values())
    with mi.Program("plain_implicit", MESH) as plain:
        xs = plain.argument("x", [b, l, m])
        p = {n: plain.argument(n, [D("layers", LAYERS), *d]) for n, d in params.items()}
        y = L.stacked(implicit_ffn, xs, p)
        plain.result(mi.mean(y * y), name="loss")
    want = mi.interpret(mi.value_and_grad(plain, wrt=["w_in"]).module, x, *L.stack_params(layers).values())
    np.testing.assert_allclose(float(got[0]), float(want[0]), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]).reshape(np.shape(want[1])), want[1], rtol=1e-4, atol=1e-6)


def _stage_collectives(exe):
    return [c for c in exe.compile_report.collectives if "stage" in c.axes]


def test_the_schedule_costs_the_bubble_and_only_permutes_cross_the_stages():
    """Forward and backward, per device: matmul FLOPs of the pipelined step are (M+P-1)/M
    times those of the same stack with the stage axis as a data axis; along `stage` the
    activations move by collective permutes (one per tick each way, the first tick's slots
    being zeros); besides, the loss's scalar is summed and the input's gradient (the input
    is replicated over the stages, and stage 0's microbatches are where it flows back) is
    all-reduced once; no stacked weight is gathered."""
    M = 4
    pipe = mi.compile(mi.value_and_grad(pipelined(M), wrt=["x", *LAYER]), layout=RULES)
    data = mi.compile(mi.value_and_grad(unpipelined(), wrt=["x", *LAYER]),
                      layout={"batch": ("stage", "x"), "heads": "y", "d_ff": "y"})
    flops = hlo_stats.dot_flops(pipe.compiled_hlo_text()), hlo_stats.dot_flops(data.compiled_hlo_text())
    assert flops[0] * M == flops[1] * (M + P - 1), flops
    along = _stage_collectives(pipe)
    shifts = [c for c in along if c.halo]
    assert len(shifts) == 2 * (M + P - 2)
    others = sorted((c.kind, c.bytes_per_device) for c in along if not c.halo)
    x_block = B // 2 * S * M_ * 4  # batch over x's 2 devices; an all-reduce over 2 sends (2 - 1) * 2 / 2 of it
    assert others == [("all_reduce", 6), ("all_reduce", x_block)], others
    hlo = hlo_stats.parse_collectives(pipe.compiled_hlo_text())
    assert sum(c.kind == "collective-permute" for c in hlo) == len(shifts)
    assert not [c for c in hlo if c.kind == "all-gather"]


def test_rematerialization_costs_one_more_forward_pass():
    """`remat=True` recomputes every stage's forward in the backward pass: exactly one more
    forward pass of matmuls (what it saves in memory is measured by benchmarks/pipeline.py)."""
    M = 4
    plain = mi.compile(mi.value_and_grad(pipelined(M), wrt=list(LAYER)), layout=RULES)
    remat = mi.compile(mi.value_and_grad(pipelined(M, remat=True), wrt=list(LAYER)), layout=RULES)
    forward = mi.compile(pipelined(M), layout=RULES)
    flops = [hlo_stats.dot_flops(e.compiled_hlo_text()) for e in (plain, remat, forward)]
    assert flops[1] - flops[0] == flops[2]


def test_bad_input_is_a_clear_error():
    x_dims = [b, l, m]
    params = L.pipeline_params(LAYER, D("stage", P), D("layers", LAYERS // P))

    def build(microbatches=4, axis="stage", p_dims=params, mesh=MESH, x=x_dims):
        with mi.Program("bad", mesh) as prog:
            xa = prog.argument("x", x)
            p = {n: prog.argument(n, d) for n, d in p_dims.items()}
            L.pipeline(layer, xa, p, microbatches=microbatches, axis=axis)

    with pytest.raises(mi.MeshIRError, match=r"3 microbatches do not divide the batch of 16") as e:
        build(microbatches=3)
    assert "test_pipeline.py" in str(e.value)
    with pytest.raises(mi.MeshIRError, match=r"microbatches must be a positive int, got 0"):
        build(microbatches=0)
    with pytest.raises(mi.MeshIRError, match=r"2 stages \(the size of 'stage'\) differ from the 4 devices of mesh "
                                             r"axis 'x'"):
        build(axis="x", mesh=mi.Mesh({"stage": 2, "x": 4}))
    with pytest.raises(mi.MeshIRError, match=r"axis 'z' is not an axis of the mesh"):
        build(axis="z")
    uneven = {**params, "w1": [D("stage", P), D("layers", 1), m, f]}
    with pytest.raises(mi.MeshIRError, match=r"the stage parameters' \(stage, layers\) sizes differ: .*w1 \(2, 1\)"):
        build(p_dims=uneven)
    with pytest.raises(mi.MeshIRError, match=r"already has a dim 'stage'"):
        build(x=[D("stage", 2), b, l, m])
    with pytest.raises(mi.MeshIRError, match=r"2 stages do not divide the 3 layers"):
        L.stage_params(per_layer_values()[:3], 2)
    layers = per_layer_values()
    layers[1] = {**layers[1], "w1": np.zeros((M_, F + 1), np.float32)}
    with pytest.raises(mi.MeshIRError, match=r"layer 1's parameters .* differ from layer 0's"):
        L.stage_params(layers, 2)
