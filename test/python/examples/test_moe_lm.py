"""The LM with a mixture of experts (`--experts`, examples/lm/model.py over
meshir.layers.moe): the same losses under every layout and in the interpreter, the
all-to-alls of its training step read from XLA's compiled HLO against the analytic bytes,
the training loss as cross-entropy plus the weighted load-balancing loss, and its flags'
bad values as one clear line each."""
from __future__ import annotations

import io
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import meshir as mi
import meshir.layers as L
import script_modules

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from meshir.lowering.runtime import hlo_collectives as hlo_stats

TINY = ["--layers", "1", "--d-model", "16", "--heads", "8", "--d-ff", "32", "--length", "8", "--batch", "8",
        "--seed", "3", "--experts", "4"]
QUIET = script_modules.LM_QUIET
lm = script_modules.lm  # a fixture


def run(lm, *flags):
    return lm.run(TINY + QUIET + list(flags), out=io.StringIO())


def test_same_losses_under_every_layout_and_in_the_interpreter(lm):
    curves = {layout: run(lm, "--steps", "3", "--layout", layout)["train_loss"]
              for layout in ("2d", "data-parallel", "single")}
    for layout, curve in curves.items():
        np.testing.assert_allclose(curve, curves["single"], rtol=2e-5, err_msg=layout)
    assert curves["2d"][-1] < curves["2d"][0]

    cfg = lm.config_of(lm.build_parser().parse_args(TINY))
    assert cfg.experts == 4 and lm.model.moe_layers(cfg) == {0}
    step, exe = lm.compiled_train_step(cfg, "data-parallel")
    tokens, targets = lm.data.train_batch(lm.data.load_corpus(), cfg.seed, 1, cfg.batch, cfg.length)
    inputs = dict(tokens=tokens, targets=targets, **lm.model.init_params(cfg), **mi.init_optimizer_state(step),
                  step=np.float32(1))
    compiled = exe(**inputs)
    reference = mi.interpret(step.program, **inputs)
    np.testing.assert_allclose(float(compiled[0]), curves["single"][0], rtol=2e-5)
    for name, got, want in zip(step.program.result_names, compiled, reference):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-6, err_msg=name)


def test_training_loss_is_cross_entropy_plus_the_weighted_balancing_loss(lm):
    """At one capacity factor for both, the training program's loss is the evaluation
    program's cross-entropy plus its aux_loss (GShard's loss times the weight)."""
    model = lm.model
    cfg = model.Config(layers=2, d_model=16, heads=4, d_ff=32, length=8, batch=8, vocab=64, experts=4,
                       capacity_factor=1.0, eval_capacity_factor=1.0, aux_loss_weight=0.5)
    mesh, rules = model.layout("2d", cfg.experts)
    rng = np.random.default_rng(1)
    batch = {"tokens": rng.integers(0, 64, (8, 8)).astype(np.int32),
             "targets": rng.integers(0, 64, (8, 8)).astype(np.int32)}
    params = model.init_params(cfg)
    train = mi.compile(model.build(cfg, mesh), layout=rules)(**batch, **params)
    evaluated = mi.compile(model.build(cfg, mesh, with_logits=True), layout=rules)(**batch, **params)
    assert evaluated._fields == ("loss", "logits", "aux_loss", "dropped")
    aux = float(evaluated.aux_loss)
    assert 0.5 <= aux  # E^2 * mean(density * proxy) >= 1 (Cauchy-Schwarz), times the weight 0.5
    np.testing.assert_allclose(float(train), float(evaluated.loss) + aux, rtol=1e-6)  # one result: the loss
    assert 0.0 <= float(evaluated.dropped) < 1.0


@pytest.mark.parametrize("layout", ["2d", "data-parallel"])
def test_training_step_has_one_all_to_all_each_way_per_moe_layer_in_each_pass(lm, layout):
    """From XLA's compiled HLO of the training step (gradients of every weight and, through
    the residual stream, of the activations): per mixture-of-experts layer, one all-to-all
    dispatching and one combining in the forward pass, and their transposes in the backward
    pass; nothing else crosses the devices along the experts. Each all-to-all over the n
    devices of x sends (n - 1) / n of a device's block of the [experts, groups, capacity,
    d_model] tensor: a block of 1/n of it (replicated over y) in the 2-D layout's dispatch,
    1/(n * y) where the tensor is also split over y (the data-parallel layout's groups; the
    2-D layout's combine, whose sum over d_ff:y the planner reduce-scatters along capacity
    before the exchange)."""
    model = lm.model
    cfg = model.Config(layers=4, d_model=32, heads=4, d_ff=64, length=16, batch=8, vocab=64, experts=4)
    mesh, rules = model.layout(layout, cfg.experts)
    exe = mi.compile(model.train_step(cfg, mesh), layout=rules)
    moe_layers = len(model.moe_layers(cfg))
    assert moe_layers == 2
    exchanged = [c for c in hlo_stats.parse_collectives(exe.compiled_hlo_text()) if c.kind == "all-to-all"]
    assert len(exchanged) == 4 * moe_layers
    assert {(c.group_size, c.num_groups) for c in exchanged} == {(4, 2)}  # over x, in each of y's 2 groups

    capacity = L.expert_capacity(cfg.length, cfg.experts, cfg.top_k, cfg.capacity_factor)
    whole = cfg.experts * cfg.batch * capacity * cfg.d_model * 4
    x, y = mesh.shape["x"], mesh.shape["y"]
    sent = [(x - 1) * whole // (x * x), (x - 1) * whole // (x * x * y)]
    expected = {"2d": sent * 2 * moe_layers, "data-parallel": [sent[1]] * 4 * moe_layers}[layout]
    assert sorted(c.bytes_per_device for c in exchanged) == sorted(expected)
    assert sum(c.bytes_per_device for c in exe.compile_report.collectives if c.kind == "all_to_all") == sum(expected)
    directions = [c.detail for c in exe.compile_report.collectives if c.kind == "all_to_all"]
    assert sum("dst_dim=experts" in d or "src_dim=batch," in d for d in directions) == 2 * moe_layers


def test_dense_configs_and_checkpoints_read_as_before(lm):
    model = lm.model
    assert not set(model.MOE_FIELDS) & set(model.Config().to_dict())
    moe = model.Config(experts=8).to_dict()
    assert {k: moe[k] for k in model.MOE_FIELDS} == {"experts": 8, "top_k": 2, "capacity_factor": 1.25,
                                                    "eval_capacity_factor": 2.0, "aux_loss_weight": 0.01}
    dims = model.param_dims(model.Config(experts=8))
    assert "l0_w1" in dims and [d.name for d in dims["l0_w1"]] == ["d_model", "d_ff"]  # layer 0 stays dense
    assert [d.name for d in dims["l1_w1"]] == ["experts", "d_model", "d_ff"]
    assert [d.name for d in dims["l1_router"]] == ["d_model", "experts_unsplit"] and "l1_b1" not in dims


def test_main_prints_the_all_to_alls_and_the_dropped_fraction(lm, capsys):
    assert lm.main(TINY + ["--steps", "2", "--eval-every", "2", "--sample", "3", "--prompt", "Ret", "--plot", "",
                          "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "mixture of experts in layer 0: 4 experts, top-2 gating" in out
    assert "all_to_all src_dim=batch_unsplit, dst_dim=experts" in out
    assert "all_to_all src_dim=experts_unsplit, dst_dim=batch" in out
    assert "over capacity (capacity factor 2)" in out and "greedy sample" in out


@pytest.mark.parametrize("flags, expected", [
    (["--layout", "model-parallel"], "--experts needs --layout 2d, data-parallel, single, not model-parallel"),
    (["--experts-per-token", "5"], "--experts-per-token must be between 1 and --experts 4, got 5"),
    (["--experts-per-token", "0"], "--experts-per-token must be between 1 and --experts 4, got 0"),
    (["--capacity-factor", "0"], "--capacity-factor must be > 0, got 0.0"),
    (["--eval-capacity-factor", "-1"], "--eval-capacity-factor must be > 0, got -1.0"),
    (["--aux-loss-weight", "-0.1"], "--aux-loss-weight must not be negative, got -0.1"),
    (["--experts", "-2"], "--experts must not be negative"),
    (["--experts", "6"], "does not divide dimension 'experts' of size 6"),
])
def test_bad_expert_flags_are_one_clear_line(lm, capsys, flags, expected):
    assert lm.main(TINY + QUIET + ["--steps", "1"] + flags) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert expected in err, err


def test_capacity_is_gshards():
    assert L.expert_capacity(64, 8, 2, 1.25) == math.ceil(2 * 1.25 * 64 / 8) == 20
    assert L.expert_capacity(16, 4, 1, 1.0) == 4 and L.expert_capacity(16, 4, 2, 100.0) == 16
    assert L.expert_capacity(8, 64, 1, 0.01) == 1
