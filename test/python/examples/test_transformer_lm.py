"""examples/transformer_lm.py: the same loss curve under every layout and in the reference
interpreter, checkpoint resume with an identical loss history, clear errors for mismatching
checkpoints and impossible layouts, a deterministic data pipeline, and the script end to end.

Every test uses one tiny model, so the script's per-process cache compiles each layout once.
"""
import io
import json
import os
import re

import numpy as np
import pytest

import meshir as mi
import script_modules
from script_modules import EXAMPLES

TINY = ["--layers", "1", "--d-model", "16", "--heads", "8", "--d-ff", "32", "--length", "8", "--batch", "8",
        "--seed", "3"]
QUIET = script_modules.LM_QUIET
lm = script_modules.lm  # a fixture


def run(lm, *flags):
    return lm.run(TINY + QUIET + list(flags), out=io.StringIO())


def tiny_config(lm):
    return lm.config_of(lm.build_parser().parse_args(TINY))


# (1) ---------------------------------------------------------------------------------------

def test_same_losses_under_every_layout_and_in_the_interpreter(lm):
    curves = {layout: run(lm, "--steps", "3", "--layout", layout)["train_loss"]
              for layout in ("2d", "data-parallel", "model-parallel", "single")}
    for layout, curve in curves.items():
        np.testing.assert_allclose(curve, curves["single"], rtol=2e-5, err_msg=layout)
    assert curves["2d"][-1] < curves["2d"][0]

    # the first step, every result (loss, parameters, optimizer state), against the interpreter
    cfg = tiny_config(lm)
    step, exe = lm.compiled_train_step(cfg, "2d")
    tokens, targets = lm.data.train_batch(lm.data.load_corpus(), cfg.seed, 1, cfg.batch, cfg.length)
    inputs = dict(tokens=tokens, targets=targets, **lm.model.init_params(cfg), **mi.init_optimizer_state(step),
                  step=np.float32(1))
    compiled = exe(**inputs)
    reference = mi.interpret(step.program, **inputs)
    assert len(compiled) == len(reference) == len(step.program.result_names)
    np.testing.assert_allclose(float(compiled[0]), curves["2d"][0], rtol=0)
    for name, got, want in zip(step.program.result_names, compiled, reference):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-6, err_msg=name)


# (2) ---------------------------------------------------------------------------------------

def test_resume_gives_the_same_loss_history(lm, tmp_path):
    straight = run(lm, "--steps", "4", "--checkpoint", str(tmp_path / "a"))
    first = run(lm, "--steps", "2", "--checkpoint", str(tmp_path / "b"))
    assert first["steps_run"] == 2
    resumed = run(lm, "--steps", "4", "--checkpoint", str(tmp_path / "b"))
    assert resumed["steps_run"] == 2
    assert len(straight["train_loss"]) == 4
    assert resumed["train_loss"] == straight["train_loss"]  # bit for bit

    assert mi.Checkpoints(tmp_path / "a").all_steps() == [4] and mi.Checkpoints(tmp_path / "b").all_steps() == [2, 4]
    (a, meta), (b, meta_b) = (mi.Checkpoints(tmp_path / d).restore() for d in ("a", "b"))  # as NumPy
    assert sorted(a) == sorted(b) == ["param", "state"]
    for group in a:
        assert sorted(a[group]) == sorted(b[group])
        for name in a[group]:
            np.testing.assert_array_equal(a[group][name], b[group][name], err_msg=f"{group}/{name}")
    assert meta["step"] == 4 and meta["config"]["d_model"] == 16 and len(meta["train_loss"]) == 4
    assert meta_b["train_loss"] == meta["train_loss"]
    assert not [f for f in os.listdir(tmp_path / "a") if "tmp" in f]  # committed by rename

    # resuming under another layout is allowed (checkpoints hold global arrays)
    again = run(lm, "--steps", "5", "--checkpoint", str(tmp_path / "b"), "--layout", "single")
    assert again["steps_run"] == 1 and again["train_loss"][:4] == straight["train_loss"]


# (3) ---------------------------------------------------------------------------------------

def test_mismatching_checkpoint_is_a_clear_error(lm, tmp_path, capsys):
    run(lm, "--steps", "1", "--checkpoint", str(tmp_path))
    with pytest.raises(lm.checkpoint.CheckpointError, match=r"--d-ff is 32 in the checkpoint but 64 now"):
        run(lm, "--steps", "2", "--checkpoint", str(tmp_path), "--d-ff", "64")
    assert lm.main(TINY + QUIET + ["--steps", "2", "--checkpoint", str(tmp_path), "--optimizer", "sgd"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--optimizer is adam in the checkpoint but sgd now" in err

    # doctored arrays, saved as a later step: one missing, one extra, one of the wrong shape
    arrays, meta = mi.Checkpoints(tmp_path).restore()
    del arrays["param"]["lnf_bias"]
    arrays["param"]["l9_wq"] = np.zeros(3, np.float32)
    arrays["state"]["embed__m"] = np.zeros((5, 16), np.float32)
    with mi.Checkpoints(tmp_path) as ckpt:
        ckpt.save(2, arrays, meta)
    with pytest.raises(lm.checkpoint.CheckpointError) as info:
        run(lm, "--steps", "3", "--checkpoint", str(tmp_path))
    message = str(info.value)
    assert f"checkpoint {tmp_path} step 2 does not match this model" in message
    assert "missing param arrays: lnf_bias" in message
    assert "unexpected param arrays: l9_wq" in message
    assert "state/embed__m has shape (5, 16), the model needs (104, 16)" in message


def test_damaged_checkpoint_is_one_line_never_a_silent_resume(lm, tmp_path, capsys):
    """An int8 parameter of the right shape (accepted silently by the .npz format), and a
    flipped byte in each array data file: one line naming the checkpoint and the problem, exit 1."""
    run(lm, "--steps", "1", "--checkpoint", str(tmp_path / "a"))
    arrays, meta = mi.Checkpoints(tmp_path / "a").restore()
    arrays["param"]["lnf_scale"] = arrays["param"]["lnf_scale"].astype(np.int8)
    with mi.Checkpoints(tmp_path / "a") as ckpt:
        ckpt.save(2, arrays, {**meta, "step": 2, "train_loss": meta["train_loss"] * 2})
    assert lm.main(TINY + QUIET + ["--steps", "3", "--checkpoint", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"checkpoint {tmp_path / 'a'} step 2: array param/lnf_scale is int8[16] in the checkpoint" in err, err

    run(lm, "--steps", "1", "--checkpoint", str(tmp_path / "b"))
    for data in (p for p in (tmp_path / "b" / "1" / "state").rglob("*") if p.parent.name == "d"):
        damaged = bytearray(data.read_bytes())
        damaged[len(damaged) // 3] ^= 0x04
        data.write_bytes(bytes(damaged))
    assert lm.main(TINY + QUIET + ["--steps", "2", "--checkpoint", str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"transformer_lm.py: error: checkpoint {tmp_path / 'b'} step 1: " in err, err
    assert "fails its checksum" in err or "cannot be read" in err, err


@pytest.mark.parametrize("change, expected", [
    (lambda m: {**m, "config": ["d_ff", 32]}, r"'config' is list \['d_ff', 32\], expected an object"),
    (lambda m: {k: v for k, v in m.items() if k != "val_loss"}, r"'val_loss' is missing"),
    (lambda m: {**m, "train_loss": "4.5"}, r"'train_loss' is str '4.5', expected a list of numbers"),
    (lambda m: {**m, "val_loss": [[0, "x"]], "step": 1.0},
     r"'step' is float 1.0, expected an integer; 'val_loss' is list \[\[0, 'x'\]\], expected a list of \[step, "
     r"loss\] pairs"),
], ids=["config a list", "no val_loss", "train_loss a string", "two fields"])
def test_metadata_of_the_wrong_kind_is_one_line(lm, tmp_path, capsys, change, expected):
    """Metadata another program wrote or edited (a field missing or of another kind): one line
    naming each field, exit 1; never a KeyError or TypeError from the resume."""
    run(lm, "--steps", "1", "--checkpoint", str(tmp_path))
    arrays, meta = mi.Checkpoints(tmp_path).restore()
    with mi.Checkpoints(tmp_path) as ckpt:
        ckpt.save(2, arrays, change({**meta, "step": 2, "train_loss": meta["train_loss"] * 2}))
    assert lm.main(TINY + QUIET + ["--steps", "3", "--checkpoint", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert re.search(f"checkpoint {re.escape(str(tmp_path))} step 2 has damaged metadata: {expected}", err), err


def test_old_single_file_checkpoint_is_a_clear_error(lm, tmp_path):
    np.savez(tmp_path / "checkpoint.npz", meta=np.array("{}"))
    with pytest.raises(lm.checkpoint.CheckpointError, match=r"checkpoint.npz is a checkpoint of format 1"):
        run(lm, "--steps", "1", "--checkpoint", str(tmp_path))


def test_impossible_layout_is_one_clear_line(lm, capsys):
    argv = TINY + QUIET + ["--steps", "1", "--heads", "4", "--layout", "model-parallel"]
    assert lm.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "--layout model-parallel" in err and "'heads' of size 4" in err and "8 devices" in err


# (4) ---------------------------------------------------------------------------------------

def test_data_pipeline_is_deterministic_and_names_its_source(lm):
    data = lm.data
    corpus = data.load_corpus()
    fresh = data.load_corpus.__wrapped__()  # recomputed, not the cached object
    assert fresh.text == corpus.text and fresh.digest == corpus.digest
    np.testing.assert_array_equal(fresh.train, corpus.train)
    assert len(corpus.text) > 100_000 and "docstrings" in corpus.source and "standard-library" in corpus.source
    assert len(corpus.validation) > 0.05 * len(corpus.text) and len(corpus.train) > 0.85 * len(corpus.text)

    x1, y1 = data.train_batch(corpus, 0, 7, 4, 16)
    x2, y2 = data.train_batch(corpus, 0, 7, 4, 16)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(x1[:, 1:], y1[:, :-1])  # targets: the next characters
    assert not np.array_equal(x1, data.train_batch(corpus, 0, 8, 4, 16)[0])
    assert not np.array_equal(x1, data.train_batch(corpus, 1, 7, 4, 16)[0])
    assert x1.dtype == np.int32 and x1.min() >= 0 and x1.max() < data.CHARS <= data.VOCAB_SIZE
    assert data.VOCAB_SIZE % 8 == 0

    assert data.decode(data.encode("Return the list.\n")) == "Return the list.\n"
    assert data.encode("é")[0] == data.UNKNOWN
    help_text = lm.build_parser().format_help()
    assert "docstrings" in help_text and "sysconfig.get_paths()['stdlib']" in help_text


# (5) ---------------------------------------------------------------------------------------

def test_main_runs_end_to_end(lm, tmp_path, capsys):
    png = tmp_path / "curve.png"
    argv = TINY + ["--steps", "2", "--eval-every", "1", "--sample", "5", "--prompt", "Ret", "--plot", str(png),
                   "--checkpoint", str(tmp_path / "ckpt"), "--no-progress"]
    assert lm.main(argv) == 0
    out = capsys.readouterr().out
    assert "collectives per step" in out and "all_reduce" in out
    assert "validation loss" in out and "greedy sample" in out
    assert (tmp_path / "ckpt" / "2" / "commit_success.txt").exists()
    if lm.plot.matplotlib_available():
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "matplotlib is not installed" in out and not png.exists()


def test_precision_bf16_trains_with_bf16_collectives_and_f32_checkpoints(lm, tmp_path, capsys):
    """--precision bf16: the step says its policy, its activation collectives move bf16, the
    loss follows the f32 run to bf16 scale, and the checkpoint holds float32."""
    argv = TINY + QUIET + ["--steps", "3", "--checkpoint", str(tmp_path / "ckpt")]
    assert lm.main(argv + ["--precision", "bf16"]) == 0
    out = capsys.readouterr().out
    assert "precision bf16: Precision(master='f32', compute='bf16', reduce='f32')" in out
    assert re.search(r"all_reduce sum\s+\(y\)\s+bf16", out), out
    specs = mi.Checkpoints(tmp_path / "ckpt").specs(3)
    assert {str(dtype) for _, dtype in specs.values()} == {"float32"}
    mixed = run(lm, "--steps", "3", "--precision", "bf16")["train_loss"]
    plain = run(lm, "--steps", "3")["train_loss"]
    np.testing.assert_allclose(mixed, plain, atol=2e-2)
    assert mixed != plain


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr is when a user runs the script."""

    def isatty(self):
        return True


def test_progress_bar_is_tqdm_with_the_step_numbers(lm):
    from tqdm import tqdm

    stream = Terminal()
    bar = lm.progress.training_bar(300, start=100, stream=stream)
    assert isinstance(bar, tqdm) and not bar.disable
    lm.progress.step(bar, 4.5, None, 1000.0)
    for _ in range(19):
        lm.progress.step(bar, 2.31, 2.40, 12345.0, learning_rate=3e-3, grad_norm=0.523)
    bar.close()
    last = stream.getvalue().split("\r")[-1]
    assert "120/300" in last and "step/s" in last and "<" in last  # tqdm's count, rate and ETA
    assert "loss=2.310, val=2.400, lr=3.0e-03, grad norm=0.52, tok/s=12,345" in last, last


def test_progress_bar_is_quiet_off_a_terminal_and_with_no_progress(lm, monkeypatch):
    log = io.StringIO()  # a log file, CI: not a terminal
    bar = lm.progress.training_bar(10, stream=log)
    lm.progress.step(bar, 1.0)
    bar.close()
    assert bar.disable and log.getvalue() == ""
    assert lm.progress.training_bar(10, stream=Terminal(), enabled=False).disable

    # the script: a bar on a terminal's stderr, none with --no-progress
    flags = TINY + ["--eval-every", "0", "--sample", "0", "--plot", "", "--steps", "2"]
    for extra, drawn in (([], True), (["--no-progress"], False)):
        stderr = Terminal()
        monkeypatch.setattr("sys.stderr", stderr)
        lm.run(flags + extra, out=io.StringIO())
        assert ("2/2 [" in stderr.getvalue() and "loss=" in stderr.getvalue()) == drawn, (extra, stderr.getvalue())


# (7) ---------------------------------------------------------------------------------------

def test_two_processes_give_the_single_process_losses(lm, tmp_path):
    """--processes 2: two processes of 4 CPU devices on the same 4x2 mesh, each feeding its
    own rows; the losses (training and validation) equal one process's within rtol 1e-5,
    and the checkpoint the two processes wrote resumes in one process on the same curve."""
    import subprocess
    import sys

    flags = TINY + ["--eval-every", "3", "--sample", "0", "--plot", "", "--no-progress"]
    single = lm.run(flags + ["--steps", "4"], out=io.StringIO())
    summary = tmp_path / "two.json"
    done = subprocess.run([sys.executable, str(EXAMPLES / "transformer_lm.py"), *flags, "--steps", "3",
                           "--processes", "2", "--summary-json", str(summary), "--checkpoint", str(tmp_path / "ck")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("train loss") == 1  # process 0 alone reports
    two = json.loads(summary.read_text())
    np.testing.assert_allclose(two["train_loss"], single["train_loss"][:3], rtol=1e-5)
    np.testing.assert_allclose([v for _, v in two["val_loss"]], [v for _, v in single["val_loss"]][:2], rtol=1e-5)
    resumed = lm.run(flags + ["--steps", "4", "--checkpoint", str(tmp_path / "ck")], out=io.StringIO())
    np.testing.assert_allclose(resumed["train_loss"], single["train_loss"], rtol=1e-5)


def test_processes_that_do_not_divide_the_mesh_are_one_clear_line(lm, capsys):
    assert lm.main(TINY + QUIET + ["--processes", "3"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "transformer_lm.py: error: --processes 3 does not divide the 4x2 mesh (x=4, y=2) of 8 devices", err


def test_layout_auto_prints_its_choice_and_trains_on_the_same_curve(lm):
    out = io.StringIO()
    auto = lm.run(TINY + QUIET + ["--steps", "3", "--layout", "auto"], out=out)
    single = run(lm, "--steps", "3", "--layout", "single")
    np.testing.assert_allclose(auto["train_loss"], single["train_loss"], rtol=2e-5)
    text = out.getvalue()
    assert "auto layout on mesh" in text and "exact (branch and bound" in text and "measured" in text, text
    chosen = lm.auto_choice(tiny_config(lm)).rules
    assert f"layout auto: {lm.model.format_rules(chosen)}" in text
