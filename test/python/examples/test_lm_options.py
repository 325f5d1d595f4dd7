"""The LM's options (examples/lm/model.py): `key_size` (d_k other than d_model / heads),
`seq_parallel` (Megatron's sequence parallelism: `length` split between layers, by
constraints), which must compute what the plain model computes, and the training options
`dropout` (a new mask every step, the same under every layout and stacking) and `clip_norm`."""
from __future__ import annotations

import dataclasses
import pathlib
import sys

import numpy as np
import pytest

import meshir as mi

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))

from lm import model

CFG = model.Config(layers=2, d_model=32, heads=4, key_size=16, d_ff=64, length=16, batch=8, vocab=64)


def test_key_size_sets_d_k_apart_from_d_model():
    CFG.check()
    assert CFG.d_k == 16 and model.Config().d_k == model.Config().d_model // model.Config().heads
    dims = model.param_dims(CFG)
    assert [d.size for d in dims["l0_wq"]] == [32, 4, 16]
    assert [d.size for d in dims["l0_wo"]] == [4, 16, 32]
    assert "key_size" not in model.Config().to_dict()  # checkpoints of configs without it read as before
    assert CFG.to_dict()["key_size"] == 16
    with pytest.raises(ValueError, match="key_size"):
        model.Config(key_size=0).check()
    model.Config(d_model=30, heads=4, key_size=8).check()  # d_model need not divide by heads


def _step(stacked: bool, remat: bool, seq_parallel):
    mesh, rules = model.layout("2d")
    params = model.init_params(CFG)
    rng = np.random.default_rng(0)
    data = {"tokens": rng.integers(0, CFG.vocab, (CFG.batch, CFG.length)).astype(np.int32),
            "targets": rng.integers(0, CFG.vocab, (CFG.batch, CFG.length)).astype(np.int32)}
    step = model.train_step(CFG, mesh, remat=remat, stacked=stacked, seq_parallel=seq_parallel)
    exe = mi.compile(step, layout=rules)
    p = model.stack_params(CFG, params) if stacked else params
    out = exe(**data, **p, **mi.init_optimizer_state(step), step=np.float32(1))
    return step, dict(zip(step.program.result_names, (np.asarray(v) for v in out)))


@pytest.mark.parametrize("stacked, remat", [(False, False), (True, True)])
def test_sequence_parallel_computes_what_the_plain_model_computes(stacked, remat):
    _, plain = _step(stacked, remat, None)
    step, split = _step(stacked, remat, "y")
    assert "mtf.shard" in str(step.program.module)
    np.testing.assert_allclose(split["loss"], plain["loss"], rtol=1e-5)
    for name, value in plain.items():
        np.testing.assert_allclose(split[name], value, rtol=1e-4, atol=1e-6, err_msg=name)


def _dropout_losses(cfg, layout: str, stacked: bool = False, remat: bool = False, steps=(1, 2, 3), seed=5):
    mesh, rules = model.layout(layout)
    step = model.train_step(cfg, mesh, stacked=stacked, remat=remat, metrics=("grad_norm",))
    exe = mi.compile(step, layout=rules)
    params = model.init_params(cfg)
    p = model.stack_params(cfg, params) if stacked else params
    rng = np.random.default_rng(0)
    data = {"tokens": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32),
            "targets": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32)}
    state = mi.init_optimizer_state(step)
    seeds = {"seed": np.int32(seed)} if cfg.dropout else {}
    return [(float(out.loss), float(out.grad_norm))
            for out in (exe(**data, **p, **state, **seeds, step=np.float32(t)) for t in steps)]


def test_dropout_draws_a_new_mask_every_step_and_the_same_on_every_layout_and_stacking():
    cfg = dataclasses.replace(CFG, key_size=None, heads=4, dropout=0.2)
    runs = {layout: _dropout_losses(cfg, layout) for layout in ("2d", "data-parallel", "single")}
    runs["stacked, remat"] = _dropout_losses(cfg, "2d", stacked=True, remat=True)
    for name, run in runs.items():
        np.testing.assert_allclose(run, runs["single"], rtol=2e-5, err_msg=name)
    losses = [loss for loss, _ in runs["single"]]
    assert len(set(losses)) == 3  # the same data and parameters: only the masks differ
    plain = _dropout_losses(dataclasses.replace(cfg, dropout=0.0), "single")
    assert plain[0][0] == plain[1][0] == plain[2][0] != losses[0]
    assert _dropout_losses(cfg, "single", seed=6)[0] != runs["single"][0]
    # the evaluation program has no dropout and no seed
    evaluation = model.build(cfg, model.layout("single")[0], with_logits=True)
    assert "seed" not in evaluation.argument_names


def test_clip_norm_clips_the_lms_gradients_and_config_round_trips():
    cfg = dataclasses.replace(CFG, key_size=None, heads=4, optimizer="sgd", lr=0.5)
    mesh, rules = model.layout("2d")
    params = model.init_params(cfg)
    rng = np.random.default_rng(1)
    data = {"tokens": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32),
            "targets": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32)}

    def first_step(clip_norm):
        step = model.train_step(dataclasses.replace(cfg, clip_norm=clip_norm), mesh, metrics=("grad_norm",))
        return mi.compile(step, layout=rules)(**data, **params, **mi.init_optimizer_state(step), step=np.float32(1))

    full = first_step(0.0)
    norm = float(full.grad_norm)
    clipped = first_step(norm / 2)  # every gradient halved
    assert float(clipped.grad_norm) == pytest.approx(norm, rel=1e-6)  # reported before clipping
    # SGD's first step moves each parameter by lr * g (momentum starts at 0): clipped, by half of it
    for name in ("l0_w1", "embed", "lnf_scale"):
        moved = np.asarray(getattr(full, name)) - params[name]
        rounding = 2 * np.spacing(np.abs(params[name]).max())  # of the new parameter, in f32
        np.testing.assert_allclose(np.asarray(getattr(clipped, name)) - params[name], moved / 2, rtol=1e-3,
                                   atol=rounding, err_msg=name)
    assert "clip_norm" not in model.Config().to_dict() and "dropout" not in model.Config().to_dict()
    assert dataclasses.replace(cfg, clip_norm=1.0, dropout=0.1).to_dict()["dropout"] == 0.1
    with pytest.raises(ValueError, match="--dropout must be in"):
        dataclasses.replace(cfg, dropout=1.0).check()
    with pytest.raises(ValueError, match="--clip-norm must not be negative"):
        dataclasses.replace(cfg, clip_norm=-1.0).check()


def test_the_gradient_norm_costs_the_lms_2d_step_one_scalar_all_reduce():
    """The LM's 2-D step with and without the gradient norm: its squared sums are pending over
    y in 4 groups of like-named gradients (embed, the attention weights, w1/w2, b1) and
    replicated in others; mtf-insert-collectives joins them (mtf.as_partial), so MeshIR's
    program completes the norm with one scalar all-reduce, and the compiled HLO
    (lowering/runtime/hlo_collectives.py) moves one f32 more than the plain step."""

    from meshir.lowering.runtime import hlo_collectives as hlo_stats
    cfg = dataclasses.replace(CFG, key_size=None, heads=4)
    mesh, rules = model.layout("2d")

    def compiled(**options):
        exe = mi.compile(model.train_step(cfg, mesh, **options), layout=rules)
        hlo = [c for c in hlo_stats.parse_collectives(exe.compiled_hlo_text()) if c.kind == "all-reduce"]
        records = exe.compile_report.collectives
        scalars = [c for c in records if c.kind == "all_reduce" and c.operand.startswith("!mtf.tensor<f32, partial")]
        return hlo, scalars, [c for c in records if c.kind == "as_partial"]

    (plain, plain_scalars, plain_joins), (normed, normed_scalars, joins) = compiled(), compiled(metrics=("grad_norm",))

    def scalar_only(ops):
        return [c for c in ops if all(s.startswith("f32[]") for s in c.operand_shapes)]

    assert len(normed_scalars) - len(plain_scalars) == 1
    assert len(scalar_only(normed)) <= len(scalar_only(plain)) + 1
    assert sum(c.operand_bytes for c in normed) - sum(c.operand_bytes for c in plain) == 4
    assert len(normed) <= len(plain) + 1
    assert joins and not plain_joins and all(c.bytes_per_device == 0 for c in joins)
