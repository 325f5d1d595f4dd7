"""Decoding the LM on the mesh it trained on: a key/value cache per layer, written in place,
and the whole generation loop on the devices (one mi.while_loop), greedy, sampled or by
beam search.

    prog = decode.program(cfg, mesh, rows=4, max_len=64)                 # greedy
    prog = decode.program(cfg, mesh, rows=4, max_len=64, temperature=0.8, top_k=20)  # sampled
    prog = decode.program(cfg, mesh, rows=4, max_len=64, beam=4, length_penalty=0.6)
    gen = decode.compile_generator(cfg, mesh, rules, rows=4, max_len=64, temperature=0.8)
    tokens = gen(params, ["Return the ", "A"], seed=0)        # [4, 64]: padding, prompt, continuation

Prompts of different lengths share a batch left-padded: a row's padding is masked out of
attention (`valid`) and its positions count from its first real character, so each row
decodes as it would alone. Every step feeds the token at slot t (the prompt's while t + 1 is
inside the prompt, then the model's choice) and writes the next one at slot t + 1; a row that
has emitted `end_token` keeps emitting it, and the loop stops when every row has (or at
`max_len`). The cache is [batch, (beam,) heads, memory_length, d_k] per layer, laid out by
the model's rules (heads split like the attention's), carried by the loop: XLA updates it in
place.

Sampling draws from softmax(logits / temperature), restricted to the `top_k` most likely
tokens when given, with the noise of step t from fold_in(seed, t): the same draw under every
layout, a new one for each seed. Beam search keeps `beam` hypotheses per row on a named
`beam` dim (which the layout may split), scores them by their log-probability, and ranks
the finished ones by it divided by GNMT's length penalty ((5 + length) / 6) ** alpha.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import meshir as mi
from meshir import layers as L

from . import model

mi.hide_from_error_locations(__file__)  # MeshIR's errors name the line that called into this library

BEAM = "beam"


def _layer(x, p, cache, t, valid):
    """One layer of model.layer on one token per row, attending through the cache."""

    def norm(h, n):
        return L.layer_norm(h, {"scale": p[f"{n}_scale"], "bias": p[f"{n}_bias"]})

    out, cache = L.cached_attention(norm(x, "ln1"), p, cache, t, valid)
    x = x + out
    return x + L.ffn(norm(x, "ln2"), p), cache


def _logits(cfg, p, tokens, positions, caches, t, valid):
    """The next token's logits [rows..., vocab] and the updated caches."""
    x = mi.gather(p["embed"], tokens, "vocab") + mi.gather(p["pos_embed"], positions, "length")
    out = []
    for i, cache in enumerate(caches):
        prefix = f"l{i}_"
        x, cache = _layer(x, {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}, cache, t, valid)
        out.append(cache)
    x = L.layer_norm(x, {"scale": p["lnf_scale"], "bias": p["lnf_bias"]})
    return L.tied_logits(x, p["embed"]), out


def _column(buffer, t, rows):
    """The token at slot t of each row: [rows...] from buffer [rows..., length]."""
    return mi.reshape(mi.dynamic_slice(buffer, "length", t, 1), rows)


def _written(buffer, t, tokens, rows):
    return mi.dynamic_update_slice(buffer, "length", t, mi.reshape(tokens, [*rows, mi.Dim("length", 1)]))


def check_options(cfg: model.Config, max_len: int, beam: int, temperature, top_k, end_token) -> None:
    """The options' values, each a ValueError naming it."""
    if not 1 <= max_len <= cfg.length:
        raise ValueError(f"the maximum length {max_len} must be in [1, {cfg.length}] (the model's positions, the "
                         f"cache's slots)")
    if isinstance(beam, bool) or not isinstance(beam, int) or beam < 0:
        raise ValueError(f"the beam width must be an int >= 1 (0: no beam search), got {beam!r}")
    if temperature is not None and not (isinstance(temperature, (int, float)) and 0 < temperature < float("inf")):
        raise ValueError(f"the temperature must be a finite number > 0, got {temperature!r}")
    if top_k is not None and not (isinstance(top_k, int) and 1 <= top_k <= cfg.vocab):
        raise ValueError(f"top-k must be in [1, {cfg.vocab}] (the vocabulary), got {top_k!r}")
    if end_token is not None and not 0 <= end_token < cfg.vocab:
        raise ValueError(f"the end token {end_token} is not in the vocabulary [0, {cfg.vocab})")


def program(cfg: model.Config, mesh: mi.Mesh, rows: int, max_len: int, *, beam: int = 0,
            temperature: float | None = None, top_k: int | None = None, end_token: int | None = None,
            length_penalty: float = 0.0) -> mi.Program:
    """The generation program for `rows` prompts. Arguments: `prompt` [batch, length] i32
    (each row's prompt left-padded to `prompt_length`, the rest ignored), `pads` [batch] i32
    (each row's padding), `prompt_length` (0-d i32), the parameters, and `seed` (0-d i32)
    when sampling. Results: `tokens` [batch, length] (the prompt then the generated tokens;
    after an end token only end tokens), and with `beam` the best hypothesis's `score`
    [batch] (its log-probability). Greedy without `temperature`; sampled with it."""
    check_options(cfg, max_len, beam, temperature, top_k, end_token)
    if beam and temperature is not None:
        raise ValueError("beam search is not sampled: give either a beam width or a temperature")
    d = model.Dims(cfg)
    batch, length = mi.Dim("batch", rows), mi.Dim("length", max_len)
    beams = [mi.Dim(BEAM, beam)] if beam else []
    mem = mi.Dim("memory_length", max_len)
    with mi.Program("generate", mesh) as prog:
        prompt = prog.argument("prompt", [batch, length], "i32")
        pads = prog.argument("pads", [batch], "i32")
        prompt_length = prog.argument("prompt_length", [], "i32")
        p = {name: prog.argument(name, dims) for name, dims in model.param_dims(cfg).items()}
        seed = prog.argument("seed", [], "i32") if temperature is not None else None
        rows_dims = [batch, *beams]
        valid = mi.greater_equal(mi.iota([batch, mem], "memory_length"), pads)
        cache = mi.constant(0.0, L.cache_dims(rows_dims, d.heads, mem, d.d_k))
        caches = [(cache, cache) for _ in range(cfg.layers)]
        buffer = prompt if not beam else mi.einsum(prompt, mi.constant(1, beams, "i32"), output=[batch, *beams, length])
        done = mi.constant(0, rows_dims, "i32")
        state = [mi.constant(0, [], "i32"), buffer, done]
        if beam:  # one live hypothesis at first: the others start at -inf
            first = mi.equal(mi.iota(beams, BEAM), 0)
            state += [mi.einsum(mi.select(first, mi.constant(0.0, beams), float("-inf")), mi.constant(1.0, [batch]),
                                output=rows_dims), mi.constant(0.0, rows_dims)]
        state += [c for kv in caches for c in kv]

        def cond(s):
            t, _, done = s[:3]
            finished = mi.reduce_sum(mi.cast(mi.equal(done, 0), "f32")) if end_token is not None else None
            stop = mi.cast(mi.greater_equal(t, max_len - 1), "f32")
            if finished is not None:
                stop = mi.maximum(stop, mi.cast(mi.equal(finished, 0.0), "f32"))
            return mi.less(stop, 0.5)

        def body(s):
            t, buffer, done = s[:3]
            extra = s[3:5] if beam else []
            flat = s[5:] if beam else s[3:]
            caches = [(flat[2 * i], flat[2 * i + 1]) for i in range(cfg.layers)]
            positions = mi.maximum(t - pads, 0)
            logits, caches = _logits(cfg, p, _column(buffer, t, rows_dims), positions, caches, t, valid)
            inside = mi.less(t + 1, prompt_length)  # the next slot still holds the prompt
            given = _column(buffer, t + 1, rows_dims)
            if beam:
                scores, lengths = extra
                nxt, scores, lengths, buffer, done, caches = _beam_step(
                    logits, scores, lengths, buffer, done, caches, inside, given, end_token, beam)
                extra = [scores, lengths]
            else:
                nxt = L.choose(logits, "vocab", seed=None if seed is None else mi.fold_in(seed, t),
                               temperature=temperature or 1.0, top_k=top_k)
                if end_token is not None:
                    nxt = mi.select(mi.equal(done, 1), end_token, nxt)
                nxt = mi.select(inside, given, nxt)
                if end_token is not None:
                    ended = mi.select(inside, 0, mi.cast(mi.equal(nxt, end_token), "i32"))
                    done = mi.maximum(done, ended)
            buffer = _written(buffer, t + 1, nxt, rows_dims)
            return [t + 1, buffer, done, *extra, *(c for kv in caches for c in kv)]

        out = mi.while_loop(cond, body, tuple(state))
        if end_token is not None:  # stopped early: every row has ended, the slots after t are end tokens
            after = mi.greater(mi.iota(out[1].dims, "length"), out[0])
            out = (out[0], mi.select(after, end_token, out[1]), *out[2:])
        if beam:
            scores, lengths = out[3], out[4]
            ranked = scores / L.length_penalty(lengths, length_penalty) if length_penalty else scores
            best = mi.argmax(ranked, BEAM)
            pick = mi.one_hot(best, mi.Dim(BEAM, beam))
            tokens = mi.cast(mi.einsum(pick, mi.cast(out[1], "f32"), output=[batch, length]), "i32")
            prog.result(tokens, name="tokens")
            prog.result(mi.einsum(pick, scores, output=[batch]), name="score")
        else:
            prog.result(out[1], name="tokens")
    return prog


def step_program(cfg: model.Config, mesh: mi.Mesh, rows: int, max_len: int) -> mi.Program:
    """One decoding step as its own program, for a loop on the host (the per-token call the
    on-device loop of `program` is measured against). Arguments: `tokens` [batch] i32 (the
    token at slot `position`), `position` (0-d i32), `pads` [batch] i32, the caches
    `cache_k_<i>`, `cache_v_<i>` [batch, heads, memory_length, d_k] of each layer, the
    parameters. Results: `logits` [batch, vocab] of the next token and the caches with this
    token's keys and values written at `position`: compiled with the caches donated
    (`cache_names`), they are updated in place, no copy per token."""
    d = model.Dims(cfg)
    batch, mem = mi.Dim("batch", rows), mi.Dim("memory_length", max_len)
    with mi.Program("decode_step", mesh) as prog:
        tokens = prog.argument("tokens", [batch], "i32")
        position = prog.argument("position", [], "i32")
        pads = prog.argument("pads", [batch], "i32")
        caches = [tuple(prog.argument(f"cache_{kv}_{i}", L.cache_dims([batch], d.heads, mem, d.d_k)) for kv in "kv")
                  for i in range(cfg.layers)]
        p = {name: prog.argument(name, dims) for name, dims in model.param_dims(cfg).items()}
        valid = mi.greater_equal(mi.iota([batch, mem], "memory_length"), pads)
        logits, caches = _logits(cfg, p, tokens, mi.maximum(position - pads, 0), caches, position, valid)
        prog.result(logits, name="logits")
        for i, (k, v) in enumerate(caches):
            prog.result(k, name=f"cache_k_{i}")
            prog.result(v, name=f"cache_v_{i}")
    return prog


def cache_names(cfg: model.Config) -> list[str]:
    """The names of the step program's key/value caches, each an argument and a result (`cache_k_0`,
    `cache_v_0`, ...): what to donate so that a call updates them in place."""
    return [f"cache_{kv}_{i}" for i in range(cfg.layers) for kv in "kv"]


def greedy_per_token(exe, cfg: model.Config, params: dict, prompts, rows: int, max_len: int) -> np.ndarray:
    """Greedy decoding by calling the compiled step program once per token from the host
    (argmax on the host), the caches donated from each call to the next: what `program`'s
    on-device loop replaces. Returns the tokens [rows, max_len] as `program` does (without
    an end token)."""
    prompt, pads, length = prompts_array(cfg, prompts, max_len, rows)
    d = model.Dims(cfg)
    shape = (rows, d.heads.size, max_len, d.d_k.size)
    caches = {name: np.zeros(shape, np.float32) for name in cache_names(cfg)}
    tokens = prompt.copy()
    for t in range(max_len - 1):
        out = exe(tokens=tokens[:, t], position=np.int32(t), pads=pads, **caches, **params)
        caches = {name: getattr(out, name) for name in caches}
        if t + 1 >= length:
            tokens[:, t + 1] = np.asarray(out.logits).argmax(-1)
    return tokens


def greedy_without_cache(logits_of_text, cfg: model.Config, prompt: str, count: int) -> str:
    """Greedy decoding without a cache, the baseline the cached decoders are measured
    against: the last `length` characters are the context, and `logits_of_text(tokens)`
    (the forward program over a [batch, length] text, as NumPy [batch, length, vocab])
    gives the next character, the most likely at the context's last position. One full
    forward pass per character: the cost of each grows with the text."""
    from . import data

    ids = list(data.encode(prompt))
    for _ in range(count):
        window = ids[-cfg.length:]
        tokens = np.zeros((cfg.batch, cfg.length), np.int32)
        tokens[:, :len(window)] = window
        ids.append(int(np.argmax(logits_of_text(tokens)[0, len(window) - 1])))
    return data.decode(ids[len(data.encode(prompt)):])


def _beam_step(logits, scores, lengths, buffer, done, caches, inside, given, end_token, width):
    """One step of beam search inside the loop: the expanded hypotheses, the best `width`
    kept and everything per hypothesis reordered after its parent. Inside the prompt the
    hypotheses stay as they are and take the prompt's next token."""
    log_probs = mi.log_softmax(logits, "vocab")
    vocab = mi.Dim("vocab", logits.type.size("vocab"))
    if end_token is not None:  # a finished hypothesis continues only with the end token, at no cost
        only_end = mi.select(mi.equal(mi.iota([vocab], "vocab"), end_token), mi.constant(0.0, [vocab]), float("-inf"))
        log_probs = mi.select(mi.equal(done, 1), only_end, log_probs)
    new_scores, parent, token = L.beam_step(scores, log_probs)
    same = mi.iota([mi.Dim(BEAM, width)], BEAM)
    parent = mi.select(inside, same, parent)
    scores = mi.select(inside, scores, new_scores)
    buffer, done, lengths = (L.reorder(v, parent, BEAM) for v in (buffer, done, lengths))
    caches = [tuple(L.reorder(c, parent, BEAM) for c in kv) for kv in caches]
    token = mi.select(inside, given, token)
    if end_token is not None:
        live = mi.select(inside, 0.0, mi.cast(mi.equal(done, 0), "f32"))
        lengths = lengths + live
        done = mi.maximum(done, mi.select(inside, 0, mi.cast(mi.equal(token, end_token), "i32")))
    else:
        lengths = lengths + mi.select(inside, mi.constant(0.0), 1.0)
    return token, scores, lengths, buffer, done, caches


def prompts_array(cfg: model.Config, prompts, max_len: int, rows: int):
    """(prompt [rows, max_len], pads [rows], prompt_length) from prompts (str or id lists),
    left-padded with id 0 to the longest; `rows` repeats the last prompt to fill the batch."""
    from . import data

    ids = [list(data.encode(p)) if isinstance(p, str) else [int(i) for i in p] for p in prompts]
    if not ids or any(not i for i in ids):
        raise ValueError("every prompt needs at least one token")
    if len(ids) > rows:
        raise ValueError(f"{len(ids)} prompts for a program of {rows} rows")
    ids += [ids[-1]] * (rows - len(ids))
    longest = max(len(i) for i in ids)
    if longest > cfg.length:
        raise ValueError(f"a prompt of {longest} tokens is longer than the cache ({cfg.length} slots, the model's "
                         f"positions)")
    if longest > max_len:
        raise ValueError(f"the maximum length {max_len} is below the longest prompt's {longest} tokens")
    prompt = np.zeros((rows, max_len), np.int32)
    pads = np.array([longest - len(i) for i in ids], np.int32)
    for r, i in enumerate(ids):
        prompt[r, pads[r]:longest] = i
    return prompt, pads, np.int32(longest)


@dataclass(frozen=True)
class Generator:
    """A compiled generation program and what it was built for."""

    cfg: model.Config
    rows: int
    max_len: int
    executable: object
    sampled: bool
    beam: int

    def __call__(self, params: dict, prompts, seed: int | None = None):
        """The tokens [rows, max_len] (each row's left padding, prompt and continuation) as
        a NumPy array, and with beam search the best hypotheses' scores [rows]."""
        if self.sampled == (seed is None):
            raise ValueError("a sampling program needs a seed" if self.sampled else "a greedy or beam program takes no seed")
        prompt, pads, length = prompts_array(self.cfg, prompts, self.max_len, self.rows)
        extra = {} if seed is None else {"seed": np.int32(seed)}
        out = self.executable(prompt=prompt, pads=pads, prompt_length=length, **params, **extra)
        if self.beam:
            return np.asarray(out.tokens), np.asarray(out.score)
        return np.asarray(out)


def compile_generator(cfg: model.Config, mesh: mi.Mesh, rules: dict, rows: int, max_len: int,
                      **options) -> Generator:
    """`program(cfg, mesh, rows, max_len, **options)` compiled under `rules`."""
    exe = mi.compile(program(cfg, mesh, rows, max_len, **options), layout=rules)
    return Generator(cfg, rows, max_len, exe, options.get("temperature") is not None, options.get("beam", 0))


def continuation(tokens: np.ndarray, prompts, row: int = 0) -> list[int]:
    """Row `row`'s generated tokens (after its prompt) from a Generator's tokens."""
    from . import data

    ids = [list(data.encode(p)) if isinstance(p, str) else list(p) for p in prompts]
    longest = max(len(i) for i in ids)
    return [int(t) for t in tokens[row, longest:]]
