"""The LM pipelined (`--stages P --pipeline-microbatches M`, examples/lm/model.py over
meshir.layers.pipeline): the losses of the unpipelined run on every layout, the shifts along
`stage` in the printed collectives, and the flags' bad values as one clear line each."""
from __future__ import annotations

import io

import numpy as np
import pytest

import meshir as mi
import script_modules

TINY = ["--layers", "2", "--d-model", "16", "--heads", "8", "--d-ff", "32", "--length", "8", "--batch", "8",
        "--seed", "3"]
QUIET = script_modules.LM_QUIET
lm = script_modules.lm  # a fixture


def run(lm, *flags):
    return lm.run(TINY + QUIET + list(flags), out=io.StringIO())


def test_pipelined_losses_are_the_unpipelined_runs(lm):
    plain = run(lm, "--steps", "3")["train_loss"]
    for flags in (["--layout", "2d", "--pipeline-microbatches", "4"],
                  ["--layout", "data-parallel", "--pipeline-microbatches", "1"]):
        curve = run(lm, "--steps", "3", "--stages", "2", *flags)["train_loss"]
        np.testing.assert_allclose(curve, plain, rtol=2e-5, err_msg=" ".join(flags))
    assert plain[-1] < plain[0]


def test_every_result_of_the_first_step_equals_the_unpipelined_steps(lm):
    """Parameters and Adam state after one step, pipelined over 2 stages of 2 layers and
    unpipelined: the same values (the pipeline's [stage, layers] parameters are the layers
    in order)."""
    model = lm.model
    plain_cfg = model.Config(layers=4, d_model=16, heads=4, d_ff=32, length=8, batch=8, vocab=64)
    piped_cfg = model.Config(**{**plain_cfg.__dict__, "stages": 2, "pipeline_microbatches": 2})
    tokens = np.random.default_rng(0).integers(0, 64, (2, 8, 8)).astype(np.int32)
    results = []
    for cfg in (plain_cfg, piped_cfg):
        mesh, rules = model.layout("2d", stages=cfg.stages)
        step = model.train_step(cfg, mesh)
        out = mi.compile(step, layout=rules)(tokens=tokens[0], targets=tokens[1], **model.init_params(cfg),
                                             **mi.init_optimizer_state(step), step=np.float32(1))
        results.append(dict(zip(step.program.result_names, (np.asarray(v) for v in out))))
    plain, piped = results
    np.testing.assert_allclose(piped["loss"], plain["loss"], rtol=1e-6)
    for kind in model._layer_dims(model.Dims(plain_cfg)):
        for suffix in ("", "__m", "__v"):
            staged = piped[f"pipeline_{kind}{suffix}"]
            per_layer = np.stack([plain[f"l{i}_{kind}{suffix}"] for i in range(4)])
            np.testing.assert_allclose(staged.reshape(per_layer.shape), per_layer, rtol=1e-4, atol=1e-6,
                                       err_msg=kind + suffix)


def test_main_prints_the_pipeline_and_its_shifts(lm, capsys):
    assert lm.main(TINY + QUIET + ["--steps", "1", "--stages", "2", "--pipeline-microbatches", "2"]) == 0
    out = capsys.readouterr().out
    assert "pipeline: 2 stages of 1 layer, 2 microbatches of 4 sequences, GPipe's schedule (3 ticks, idle 1/3" in out
    assert "stage=2, x=2, y=2" in out
    assert "collective_permute halo exchange: shift, dim=stage, rows=1+0  (stage)" in out  # forward: each slot to the next stage
    assert "collective_permute halo exchange: shift, dim=stage, rows=0+1  (stage)" in out  # backward: the transposed shift
    assert "all_gather" not in out.split("collectives per step")[1].split("total:")[0]


@pytest.mark.parametrize("flags, expected", [
    (["--stages", "3"], "--stages must be one of 2, 4 (a mesh axis of the 8 devices), got 3"),
    (["--stages", "4", "--layers", "2"], "--stages 4 does not divide the 2 --layers"),
    (["--stages", "2", "--pipeline-microbatches", "3"], "--pipeline-microbatches 3 does not divide the --batch 8"),
    (["--stages", "2", "--pipeline-microbatches", "0"], "--pipeline-microbatches 0 does not divide the --batch 8"),
    (["--stages", "2", "--experts", "4"], "--stages runs with neither --experts nor --dropout"),
    (["--stages", "2", "--layout", "auto"], "--stages needs a named --layout"),
    (["--stages", "-1"], "--stages must not be negative"),
])
def test_bad_pipeline_flags_are_one_clear_line(lm, capsys, flags, expected):
    assert lm.main(TINY + QUIET + ["--steps", "1"] + flags) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert expected in err, err
