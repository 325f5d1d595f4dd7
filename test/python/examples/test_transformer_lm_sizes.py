"""examples/transformer_lm.py --size: the medium size's config (>= 10M parameters) and its
flags' precedence, the large corpus (deterministic, larger, holding the small corpus's held-out
text out too), the learning-rate schedule in the compiled step, the whole-held-out-text
evaluation of benchmarks/lm_heldout.py, and one step of the medium model.
"""
import dataclasses
import io
import json

import numpy as np
import pytest

import meshir as mi
import script_modules
from script_modules import ROOT, load_script

TINY = ["--layers", "1", "--d-model", "16", "--heads", "8", "--d-ff", "32", "--length", "8", "--batch", "8"]
QUIET = script_modules.LM_QUIET
lm = script_modules.lm  # a fixture


def n_params(lm, cfg) -> int:
    return sum(int(np.prod([d.size for d in dims])) for dims in lm.model.param_dims(cfg).values())


def test_size_flag_sets_defaults_and_explicit_flags_override(lm):
    small = lm.parse_args([])
    assert lm.config_of(small) == lm.config_of(lm.parse_args(["--size", "small"]))
    assert small.corpus == "small" and small.steps == 1200
    assert lm.config_of(small) == dataclasses.replace(lm.model.Config(), vocab=lm.data.VOCAB_SIZE)

    medium = lm.parse_args(["--size", "medium"])
    cfg = lm.config_of(medium)
    assert n_params(lm, cfg) >= 10_000_000
    assert medium.corpus == "large" and cfg.warmup > 0 and cfg.decay_steps == medium.steps

    mixed = lm.config_of(lm.parse_args(["--layers", "2", "--size", "medium", "--lr", "0.01", "--decay-steps", "0"]))
    assert (mixed.layers, mixed.lr, mixed.decay_steps) == (2, 0.01, 0)
    assert (mixed.d_model, mixed.length, mixed.warmup) == (cfg.d_model, cfg.length, cfg.warmup)
    assert lm.parse_args(["--size", "medium", "--corpus", "small"]).corpus == "small"
    assert "(default: 384)" in lm.build_parser("medium").format_help()


def test_bad_size_and_schedule_are_clear_errors(lm, capsys):
    with pytest.raises(SystemExit) as info:
        lm.parse_args(["--size", "huge"])
    assert info.value.code == 2
    assert "argument --size: invalid choice: 'huge'" in capsys.readouterr().err
    with pytest.raises(lm.UsageError, match="--decay-steps 50 must be after the --warmup 100 steps"):
        lm.config_of(lm.parse_args(["--warmup", "100", "--decay-steps", "50"]))
    with pytest.raises(ValueError, match="unknown corpus 'huge'"):
        lm.data.load_corpus("huge")


def test_large_corpus_is_deterministic_larger_and_holds_out_the_small_ones_text(lm):
    data = lm.data
    small, large = data.load_corpus("small"), data.load_corpus("large")
    fresh = data.load_corpus.__wrapped__("large")  # recomputed, not the cached object
    assert fresh.digest == large.digest and fresh.text == large.text
    np.testing.assert_array_equal(fresh.validation, large.validation)
    assert large.digest != small.digest and len(large.text) > 4 * len(small.text)
    assert "language reference topics" in large.source and "standard-library modules" in large.source
    assert large.text.startswith(small.text[:-1])
    np.testing.assert_array_equal(large.validation[:len(small.validation)], small.validation)


def test_heldout_batches_cover_the_validation_text_once(lm):
    corpus = lm.data.load_corpus()
    batches = lm.data.heldout_batches(corpus, 4, 100)
    tokens = np.concatenate([x for x, _ in batches]).reshape(-1)
    targets = np.concatenate([y for _, y in batches]).reshape(-1)
    assert all(x.shape == (4, 100) for x, _ in batches)
    assert len(corpus.validation) - 4 * 100 - 1 < len(tokens) <= len(corpus.validation) - 1
    np.testing.assert_array_equal(tokens, corpus.validation[:len(tokens)])
    np.testing.assert_array_equal(targets, corpus.validation[1:len(tokens) + 1])


def test_learning_rate_schedule_scales_the_compiled_update(lm):
    """The LM's schedule is mi.schedules' (optax's convention: the count of updates already
    applied), checked against optax's, and it scales Adam's first update."""
    import optax

    model = lm.model
    cfg = lm.config_of(lm.parse_args(TINY))
    scheduled = dataclasses.replace(cfg, warmup=10, decay_steps=30)
    lr = cfg.lr
    oracle = optax.join_schedules([optax.linear_schedule(0.0, lr, 10), optax.linear_schedule(lr, lr * 0.1, 20)], [10])
    schedule = model.schedule(scheduled)
    for count in (0, 1, 9, 10, 20, 30, 45):
        assert schedule(count) == pytest.approx(float(oracle(count)), rel=1e-6, abs=1e-12)
    assert model.schedule(cfg) == cfg.lr
    mesh, rules = model.layout("2d")
    tokens, targets = lm.data.train_batch(lm.data.load_corpus(), 0, 1, cfg.batch, cfg.length)
    params = model.init_params(cfg)
    steps = [model.train_step(c, mesh) for c in (cfg, scheduled)]
    exes = [mi.compile(step, layout=rules) for step in steps]
    for t in (3, 20, 40):
        deltas = []
        for step, exe in zip(steps, exes):
            out = exe(tokens=tokens, targets=targets, **params, **mi.init_optimizer_state(step), step=np.float32(t))
            deltas.append(np.asarray(out.l0_w1) - params["l0_w1"])
        np.testing.assert_allclose(deltas[1], deltas[0] * schedule(t - 1) / lr, rtol=1e-3, atol=1e-9)


def test_heldout_script_evaluates_a_checkpoint_on_both_corpora(lm, tmp_path, capsys):
    lm.run(TINY + QUIET + ["--steps", "2", "--checkpoint", str(tmp_path / "tiny")], out=io.StringIO())
    heldout = load_script(ROOT / "benchmarks" / "lm_heldout.py", "lm_heldout")
    assert heldout.main([str(tmp_path / "tiny"), "--json", str(tmp_path / "rows.json")]) == 0
    out = capsys.readouterr().out
    assert "| `" + str(tmp_path / "tiny") + "` | 3,984 | 1 x 16, 8 x 8 | small | 2 |" in out
    row = json.loads((tmp_path / "rows.json").read_text())[0]
    for name in lm.data.CORPORA:
        corpus = lm.data.load_corpus(name)
        assert 3.0 < row[f"heldout_{name}"] < 5.0
        assert len(corpus.validation) - 8 * 8 - 1 < row[f"chars_{name}"] <= len(corpus.validation)


def test_medium_model_trains_one_step(lm):
    """The medium model at its full width and depth (10.7M parameters), on 8 x 8 characters."""
    out = io.StringIO()
    argv = ["--size", "medium", "--length", "8", "--steps", "1"] + QUIET
    result = lm.run(argv, out=out)
    cfg = lm.config_of(lm.parse_args(argv))
    assert cfg.layers == 6 and cfg.d_model == 384 and n_params(lm, cfg) >= 10_000_000
    assert f"{n_params(lm, cfg):,} parameters" in out.getvalue()
    assert len(result["train_loss"]) == 1 and 4.0 < result["train_loss"][0] < 5.5
