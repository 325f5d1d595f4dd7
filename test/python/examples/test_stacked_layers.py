"""Stacked layers: the LM's layers as one mi.scan over parameters with a `layers` dim
(examples/lm/model.py, `stacked=True`) compute what the unrolled layers compute, from the
same parameters stacked: the same loss and the same updated parameters."""
from __future__ import annotations

import dataclasses
import pathlib
import sys

import numpy as np

import meshir as mi

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))

from lm import model


def test_a_scanned_training_step_equals_the_unrolled_one():
    cfg = dataclasses.replace(model.Config(), layers=3)
    mesh, rules = model.layout("2d")
    params = model.init_params(cfg)
    rng = np.random.default_rng(0)
    data = {"tokens": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32),
            "targets": rng.integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32)}
    out = {}
    for stacked in (False, True):
        step = model.train_step(cfg, mesh, stacked=stacked)
        exe = mi.compile(step, layout=rules)
        p = model.stack_params(cfg, params) if stacked else params
        out[stacked] = dict(zip(step.program.result_names,
                                (np.asarray(v) for v in exe(**data, **p, **mi.init_optimizer_state(step),
                                                            step=np.float32(1)))))
    assert "mtf.scan" in str(model.build(cfg, mesh, stacked=True).module)
    np.testing.assert_allclose(out[True]["loss"], out[False]["loss"], rtol=1e-6)
    unrolled = model.stack_params(cfg, {k: v for k, v in out[False].items() if k in params})
    for name, value in unrolled.items():
        np.testing.assert_allclose(out[True][name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_stacked_parameters_have_a_leading_layers_dim():
    cfg = model.Config()
    dims = model.param_dims(cfg, stacked=True)
    assert [d.name for d in dims["layers_wq"]] == ["layers", "d_model", "heads", "d_k"]
    assert not any(name.startswith("l0_") for name in dims)
    stacked = model.stack_params(cfg, model.init_params(cfg))
    assert stacked["layers_w1"].shape == (cfg.layers, cfg.d_model, cfg.d_ff)
