"""An independent NumPy (float64) reference of the example LM (examples/lm/model.py: the
dense, unstacked, unpipelined model), the oracle of the decoding tests.

    x = embed[tokens] + pos_embed[positions]
    per layer i:  x += attention(layer_norm(x, ln1));  x += ffn(layer_norm(x, ln2))
    logits = layer_norm(x, lnf) @ embed.T          (tied output projection)

layer_norm: (x - mean) / sqrt(mean((x - mean)^2) + 1e-6) * scale + bias over d_model.
Attention: wq, wk, wv [d_model, heads, d_k], wo [heads, d_k, d_model]; logits / sqrt(d_k)
plus MASK_VALUE (-1e9) where a query may not see a memory position; softmax over memory.
FFN: gelu_tanh(x w1 + b1) w2 + b2. Decoders recompute the whole forward every step (no cache).
"""
from __future__ import annotations

import itertools

import numpy as np

MASK_VALUE = -1e9
EPSILON = 1e-6


def _layer_norm(x, scale, bias):
    centered = x - x.mean(-1, keepdims=True)
    variance = (centered * centered).mean(-1, keepdims=True)
    return centered / np.sqrt(variance + EPSILON) * scale + bias


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def _log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def logits(params, cfg, tokens, positions=None, valid=None):
    """[batch, n, vocab] float64 logits of int `tokens` [batch, n] (n <= cfg.length).
    `positions` [batch, n]: the rows of pos_embed (default arange(n)); `valid` [batch, n]
    bool: real tokens (default all). Query i sees memory j iff j <= i and valid[b, j]; the
    others get MASK_VALUE added. Rows of padding get whatever the math gives."""
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    tokens = np.asarray(tokens)
    b, n = tokens.shape
    positions = np.broadcast_to(np.arange(n), (b, n)) if positions is None else np.asarray(positions)
    valid = np.ones((b, n), bool) if valid is None else np.asarray(valid, bool)
    sees = (np.arange(n)[None, :] <= np.arange(n)[:, None])[None] & valid[:, None, :]  # [b, i, j]
    bias = np.where(sees, 0.0, MASK_VALUE)[:, None]  # [b, 1 (heads), i, j]
    x = p["embed"][tokens] + p["pos_embed"][positions]
    for i in range(cfg.layers):
        w = {k[len(f"l{i}_"):]: v for k, v in p.items() if k.startswith(f"l{i}_")}
        h = _layer_norm(x, w["ln1_scale"], w["ln1_bias"])
        q, k, v = (np.einsum("bnm,mhk->bhnk", h, w[name]) for name in ("wq", "wk", "wv"))
        scores = np.einsum("bhik,bhjk->bhij", q, k) / np.sqrt(q.shape[-1]) + bias
        weights = np.exp(_log_softmax(scores))
        x = x + np.einsum("bhij,bhjk,hkm->bim", weights, v, w["wo"], optimize=True)
        h = _layer_norm(x, w["ln2_scale"], w["ln2_bias"])
        x = x + _gelu(h @ w["w1"] + w["b1"]) @ w["w2"] + w["b2"]
    return _layer_norm(x, p["lnf_scale"], p["lnf_bias"]) @ p["embed"].T


def greedy(params, cfg, prompt, max_len, end_token=None):
    """Greedy decoding of a batch of prompts (lists of ints, any lengths): each LEFT-padded
    with 0 to the longest (valid=False there; positions = index - the row's pad count,
    clamped at 0), then argmax over the vocab of the last position's logits appended to
    every row until the length is max_len. A row whose generated token was `end_token`
    emits end_token from then on. Returns int64 [batch, max_len]."""
    width = max(len(row) for row in prompt)
    pads = np.array([width - len(row) for row in prompt])
    seq = np.array([[0] * pad + list(row) for pad, row in zip(pads, prompt)], np.int64).reshape(len(prompt), width)
    done = np.zeros(len(prompt), bool)
    while seq.shape[1] < max_len:
        index = np.arange(seq.shape[1])[None, :]
        out = logits(params, cfg, seq, np.maximum(index - pads[:, None], 0), index >= pads[:, None])
        token = out[:, -1].argmax(-1)
        if end_token is not None:
            token = np.where(done, end_token, token)
            done |= token == end_token
        seq = np.concatenate([seq, token[:, None]], 1)
    return seq


def sequence_log_prob(params, cfg, prompt, continuation):
    """log P(continuation | prompt) for one row: the sum of the log-softmax probabilities of
    each continuation token at the position before it (0.0 for an empty continuation)."""
    continuation = list(continuation)
    if not continuation:
        return 0.0
    seq = list(prompt) + continuation[:-1]
    lp = _log_softmax(logits(params, cfg, np.array([seq]))[0])
    start = len(prompt) - 1
    return float(sum(lp[start + t, token] for t, token in enumerate(continuation)))


def penalized(score, length, length_penalty):
    """GNMT's ranking score: score / ((5 + length) / 6) ** length_penalty (length: the
    generated tokens, up to and including an end token)."""
    return score / ((5.0 + length) / 6.0) ** length_penalty


def beam_search(params, cfg, prompt, width, steps, length_penalty=0.0, end_token=None):
    """Beam search for ONE prompt over `steps` steps. Each live beam is expanded by every
    token (score: cumulative log prob); a beam that emitted `end_token` is finished and
    carried unexpanded with its score. The top `width` candidates by score are kept, ties to
    the lower beam index then the lower token id (a carried beam sits at its beam's index,
    before its siblings' expansions). The final beams are ranked by `penalized`. Returns
    (the best continuation as a list, its raw score)."""
    beams = [([], 0.0, False)]  # (continuation, score, finished)
    for _ in range(steps):
        live = [seq for seq, _, finished in beams if not finished]
        if live:
            batch = np.array([list(prompt) + seq for seq in live])
            lp = iter(_log_softmax(logits(params, cfg, batch)[:, -1]))
        candidates = []  # (score, beam index, token, continuation, finished)
        for index, (seq, score, finished) in enumerate(beams):
            if finished:
                candidates.append((score, index, -1, seq, True))
                continue
            row = next(lp)
            for token in range(cfg.vocab):
                candidates.append((score + row[token], index, token, seq + [token], token == end_token))
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        beams = [(seq, score, finished) for score, _, _, seq, finished in candidates[:width]]
    best = max(range(len(beams)),
               key=lambda b: (penalized(beams[b][1], len(beams[b][0]), length_penalty), -b))
    return beams[best][0], beams[best][1]


def exhaustive_best(params, cfg, prompt, steps, length_penalty=0.0, end_token=None):
    """The best of all vocab**steps continuations by `penalized` score, each cut after its
    first `end_token` (continuations equal up to it are one). Tiny vocab and steps only.
    Returns (the continuation as a list, its raw score); ties to the first enumerated."""
    seen, best = set(), None
    for full in itertools.product(range(cfg.vocab), repeat=steps):
        seq = list(full[:full.index(end_token) + 1]) if end_token in full else list(full)
        if tuple(seq) in seen:
            continue
        seen.add(tuple(seq))
        score = sequence_log_prob(params, cfg, prompt, seq)
        key = penalized(score, len(seq), length_penalty)
        if best is None or key > best[0]:
            best = (key, seq, score)
    return best[1], best[2]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
    import meshir as mi
    from lm import model

    cfg = model.Config(layers=2, d_model=16, heads=4, d_ff=32, length=16, batch=8, vocab=6)

    def scaled(k, v):  # weights x3, embeddings x20: a peaked next-token distribution
        return v if k.endswith(("scale", "bias")) else v * (20.0 if "embed" in k else 3.0)

    params = {k: np.asarray(scaled(k, v), np.float32) for k, v in model.init_params(cfg).items()}
    t = np.random.default_rng(0).integers(0, cfg.vocab, (cfg.batch, cfg.length)).astype(np.int32)
    exe = mi.compile(model.build(cfg, mi.Mesh({"x": 1}), with_logits=True), layout={})
    _, compiled = exe(tokens=t, targets=t, **params)
    error = np.abs(np.asarray(compiled, np.float64) - logits(params, cfg, t)).max()
    print(f"(a) max |compiled - reference| logits: {error:.2e}")
    assert error < 1e-4, error
    steps, cases, by_penalty = 3, 0, set()
    for prompt in ([1, 4, 2], [0], [5, 5, 1, 3]):
        for end_token in (None, 3, 5):
            winners = []
            for penalty in (0.0, 1.0, 3.0):
                beam = beam_search(params, cfg, prompt, cfg.vocab ** (steps - 1), steps, penalty, end_token)
                exact = exhaustive_best(params, cfg, prompt, steps, penalty, end_token)
                assert beam[0] == exact[0] and abs(beam[1] - exact[1]) < 1e-9, (prompt, end_token, beam, exact)
                winners.append(tuple(exact[0]))
                cases += 1
            print(f"(b) prompt {prompt} end {end_token}: best for penalties 0, 1, 3: {winners}")
            if len(set(winners)) > 1:
                by_penalty.add((tuple(prompt), end_token))
    print(f"(b) beam search (width {cfg.vocab ** (steps - 1)}) == exhaustive in {cases} cases; "
          f"the penalty changed the winner in {len(by_penalty)} of {cases // 3} (prompt, end) pairs")
    padded = greedy(params, cfg, [[1, 2, 3, 4], [4, 1]], 10, end_token=5)
    alone = greedy(params, cfg, [[4, 1]], 8, end_token=5)
    print("(c) greedy:", padded.tolist(), "unpadded row 2:", alone.tolist())
    assert (padded[1, 2:] == alone[0]).all() and (padded[1, :2] == 0).all()
    print("ok")
