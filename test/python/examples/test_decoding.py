"""Decoding the LM with a key/value cache (examples/lm/decode.py over meshir.layers'
decoding pieces), against the NumPy reference (lm_reference.py) and the LM's own forward
program without a cache: greedy decoding, with an end token and prompts of different lengths;
beam search of width 1 (greedy) and of full width (an exhaustive search); sampling, the same
draws under every layout; the options' bad values."""
from __future__ import annotations

import numpy as np
import pytest

import meshir as mi
from meshir import layers as L
import lm_reference as R
import script_modules
from script_modules import EXAMPLES, load_script

load_script(EXAMPLES / "transformer_lm.py", "transformer_lm")  # puts examples/ on the path
from lm import decode, model  # noqa: E402

lm = script_modules.lm  # a fixture

CFG = model.Config(layers=2, d_model=16, heads=4, d_ff=32, length=16, batch=8, vocab=6)
PROMPTS = [[1, 4, 2], [0], [5, 5, 1, 3], [2, 2], [3], [1, 1, 1], [4, 0], [2]]


@pytest.fixture(scope="module")
def params():
    """Initial values scaled up so that the next token is not a near tie (a flat
    distribution would make every search agree trivially)."""
    return {k: v if k.endswith("scale") else v * (20 if "embed" in k else 3) for k, v in model.init_params(CFG).items()}


@pytest.mark.parametrize("layout", ["2d", "data-parallel"])
def test_greedy_with_the_cache_equals_the_reference_and_the_forward_without_it(params, layout):
    mesh, rules = model.layout(layout)
    tokens = decode.compile_generator(CFG, mesh, rules, rows=8, max_len=12)(params, PROMPTS)
    np.testing.assert_array_equal(tokens, R.greedy(params, CFG, PROMPTS, 12))
    # without a cache: the LM's forward program over the whole text for every new token
    forward = mi.compile(model.build(CFG, mesh, with_logits=True), layout=rules)
    text = np.zeros((8, CFG.length), np.int32)
    text[:, :3] = PROMPTS[0]
    for t in range(3, 12):
        logits = np.asarray(forward(tokens=text, targets=text, **params)[1])
        text[:, t] = logits[:, t - 1].argmax(-1)
    np.testing.assert_array_equal(tokens[0, 1:], text[0, :11])  # row 0: one pad, then the same text


def test_an_end_token_ends_each_row_and_the_loop(params):
    mesh, rules = model.layout("2d")
    tokens = decode.compile_generator(CFG, mesh, rules, rows=8, max_len=14, end_token=5)(params, PROMPTS)
    np.testing.assert_array_equal(tokens, R.greedy(params, CFG, PROMPTS, 14, end_token=5))
    assert (tokens[:, -1] == 5).all()  # every row ended, and the slots after the loop's last are end tokens


@pytest.mark.parametrize("layout", ["2d", "data-parallel"])
def test_beam_search_of_width_one_is_greedy(params, layout):
    mesh, rules = model.layout(layout)
    tokens, scores = decode.compile_generator(CFG, mesh, rules, rows=8, max_len=12, beam=1)(params, PROMPTS)
    np.testing.assert_array_equal(tokens, R.greedy(params, CFG, PROMPTS, 12))
    for row in (0, 2):
        generated = decode.continuation(tokens, PROMPTS, row)
        np.testing.assert_allclose(scores[row], R.sequence_log_prob(params, CFG, PROMPTS[row], generated), rtol=1e-4)


@pytest.mark.parametrize("end_token, penalty, rules", [
    (None, 0.0, {"batch": "x", "beam": "y"}),   # the beams split over y
    (5, 1.0, {"batch": "x", "heads": "y", "d_ff": "y", "vocab": "y"}),
    (3, 3.0, {"batch": ("x", "y")}),
])
def test_beam_search_of_full_width_is_an_exhaustive_search(params, end_token, penalty, rules):
    """Three generated tokens over a vocabulary of 6: 36 beams keep every prefix, so the
    best hypothesis is the best of all 216 continuations (after its end token, none)."""
    prompts = PROMPTS[:4] * 2
    gen = decode.compile_generator(CFG, mi.Mesh({"x": 4, "y": 2}), rules, rows=8, max_len=7, beam=36,
                                   end_token=end_token, length_penalty=penalty)
    tokens, scores = gen(params, prompts)
    for row, prompt in enumerate(prompts[:4]):
        best, score = R.exhaustive_best(params, CFG, prompt, 3, length_penalty=penalty, end_token=end_token)
        got = decode.continuation(tokens, prompts, row)
        if end_token in got:
            got = got[:got.index(end_token) + 1]
        assert got == list(best), (row, got, best)
        np.testing.assert_allclose(scores[row], score, rtol=1e-4)


def test_sampling_draws_the_same_under_every_layout_and_a_new_draw_per_seed(params):
    draws = []
    for layout in ("2d", "data-parallel", "single"):
        mesh, rules = model.layout(layout)
        gen = decode.compile_generator(CFG, mesh, rules, rows=8, max_len=12, temperature=0.9, top_k=4)
        draws.append(gen(params, PROMPTS, seed=7))
    for d in draws[1:]:
        np.testing.assert_array_equal(d, draws[0])
    assert (gen(params, PROMPTS, seed=8) != draws[0]).any()
    assert (draws[0] != R.greedy(params, CFG, PROMPTS, 12)).any()  # sampled, not the argmax
    one = decode.compile_generator(CFG, *model.layout("2d"), rows=8, max_len=12, temperature=1.0, top_k=1)
    np.testing.assert_array_equal(one(params, PROMPTS, seed=3), R.greedy(params, CFG, PROMPTS, 12))  # top-1: greedy


@pytest.mark.parametrize("options, expected", [
    ({"beam": -1}, "the beam width must be an int >= 1 (0: no beam search), got -1"),
    ({"temperature": 0.0}, "the temperature must be a finite number > 0, got 0.0"),
    ({"temperature": -1.0}, "the temperature must be a finite number > 0, got -1.0"),
    ({"temperature": 1.0, "top_k": 7}, "top-k must be in [1, 6] (the vocabulary), got 7"),
    ({"max_len": 17}, "the maximum length 17 must be in [1, 16]"),
    ({"beam": 2, "temperature": 1.0}, "give either a beam width or a temperature"),
])
def test_bad_options_are_clear_errors(options, expected):
    options = {"max_len": 8, **options}
    with pytest.raises(ValueError) as e:
        decode.program(CFG, mi.Mesh({"x": 1}), rows=1, **options)
    assert expected in str(e.value)


def test_bad_prompts_are_clear_errors():
    with pytest.raises(ValueError, match=r"a prompt of 17 tokens is longer than the cache \(16 slots"):
        decode.prompts_array(CFG, [[1] * 17], 16, 1)
    with pytest.raises(ValueError, match=r"the maximum length 4 is below the longest prompt's 5 tokens"):
        decode.prompts_array(CFG, [[1] * 5, [2]], 4, 2)
    with pytest.raises(ValueError, match=r"every prompt needs at least one token"):
        decode.prompts_array(CFG, [[]], 4, 1)
    with pytest.raises(mi.MeshIRError, match=r"top_k must be an int in \[1, 6\].*got 9"):
        with mi.Program("p", mi.Mesh({"x": 1})) as prog:
            logits = prog.argument("logits", [mi.Dim("vocab", 6)])
            L.choose(logits, seed=1, top_k=9)


TINY = ["--layers", "1", "--d-model", "16", "--heads", "8", "--d-ff", "32", "--length", "16", "--batch", "8",
        "--seed", "3", "--eval-every", "0", "--plot", "", "--no-progress"]


def test_meshir_errors_raised_through_the_library_name_the_callers_line(params):
    """examples/lm hides its files from error locations: a batch of 3 rows that the rule
    batch:x cannot split over 4 devices is reported at this line (the user's call), with the
    note at it too, never at decode.py's `prog.argument`."""
    import inspect

    mesh, rules = model.layout("2d")
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(mi.MeshIRError) as info:
        decode.compile_generator(CFG, mesh, rules, rows=3, max_len=12)
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}:") and "does not divide dimension 'batch' of size 3" in message
    assert "decode.py" not in message and "model.py" not in message, message
    generate = decode.compile_generator(CFG, mesh, rules, rows=8, max_len=12)
    with pytest.raises(mi.MeshIRError) as info:  # a runtime error through Generator.__call__
        generate({**params, "embed": params["embed"][:2]}, PROMPTS)
    line = inspect.currentframe().f_lineno - 1
    assert str(info.value).startswith(f"{__file__}:{line}:") and "argument 'embed'" in str(info.value), info.value


def test_the_example_prints_a_greedy_a_sampled_and_a_beam_sample(lm, capsys):
    assert lm.main(TINY + ["--steps", "2", "--sample", "40", "--prompt", "Ret", "--beam", "2"]) == 0
    out = capsys.readouterr().out
    assert "samples after 2 steps, 13 characters (--sample 40 capped by --length 16)" in out
    assert "greedy sample:  [Ret]" in out and "sampled (temperature 0.8, top-20, seed 3):  [Ret]" in out
    assert "beam search (width 2, length penalty 0.6):  [Ret]" in out
    assert "greedy with the cache" in out and "without it" in out
    assert "differs" not in out  # the greedy sample without the cache is the same text


@pytest.mark.parametrize("flags, expected", [
    (["--beam", "0"], "--beam must be at least 1, got 0"),
    (["--temperature", "0"], "--temperature must be a finite number > 0, got 0.0"),
    (["--top-k", "105"], "--top-k must be in [1, 104] (the vocabulary), got 105"),
    (["--prompt", "x" * 16], "--prompt of 16 characters leaves no room to generate: the key/value cache has "
                             "--length 16 slots"),
])
def test_bad_sampling_flags_are_one_clear_line(lm, capsys, flags, expected):
    assert lm.main(TINY + ["--steps", "1", "--sample", "5"] + flags) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert expected in err, err


def test_the_step_program_updates_its_donated_cache_in_place_and_decodes_greedily(params):
    """One call per token from the host, the caches donated from call to call: the same
    tokens as the on-device loop and the reference; each call consumes its input caches."""
    mesh, rules = model.layout("2d")
    exe = mi.compile(decode.step_program(CFG, mesh, 8, 12), layout=rules, donate=decode.cache_names(CFG))
    np.testing.assert_array_equal(decode.greedy_per_token(exe, CFG, params, PROMPTS, 8, 12),
                                  R.greedy(params, CFG, PROMPTS, 12))
    prompt, pads, _ = decode.prompts_array(CFG, PROMPTS, 12, 8)
    first = exe(tokens=prompt[:, 0], position=np.int32(0), pads=pads, **params,
                **{n: np.zeros((8, 4, 12, 4), np.float32) for n in decode.cache_names(CFG)})
    caches = {n: getattr(first, n) for n in decode.cache_names(CFG)}
    exe(tokens=prompt[:, 1], position=np.int32(1), pads=pads, **params, **caches)
    assert all(c.is_deleted() for c in caches.values())  # donated: the next call wrote into them
