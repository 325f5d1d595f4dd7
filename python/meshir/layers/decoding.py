"""The pieces of autoregressive decoding on named dims: attention over a key/value cache
written in place, the next token's choice (greedy, sampled with temperature and top-k), and
one step of beam search with its beams a named dim.

    cache      (keys, values), each [..., heads, memory_length, d_k]   (cache_dims)
    x          [..., d_model]: one token per row (no length dim)
    position   0-d i32: the cache slot this token fills
    valid      [..., memory_length] i1 (optional): the slots a row may attend to (False on a
               left-padded prompt's padding)
"""
from __future__ import annotations

import math

from meshir.api.ops import composites
from meshir.api.ops.attention import dot_product_attention
from meshir.api.ops.contraction import einsum, reduce_sum
from meshir.api.ops.creation import constant, iota
from meshir.api.ops.dynamic import dynamic_update_slice
from meshir.api.ops.elementwise import cast, div, exp, less_equal, log, select, sub
from meshir.api.ops.indexing import one_hot
from meshir.api.ops.selection import argmax, top_k
from meshir.api.ops.shape import rename, reshape, transpose
from meshir.api.programs.dims import Dim

from . import _checks as checks

__all__ = ["cache_dims", "cached_attention", "choose", "beam_step", "length_penalty", "reorder"]

NEG_INF = float("-inf")


def cache_dims(rows: list[Dim], heads: Dim, memory_length: Dim, d_k: Dim) -> list[Dim]:
    """The dims of one layer's key (or value) cache: the rows' dims, then heads, the slots, d_k."""
    return [*rows, heads, memory_length, d_k]


def cached_attention(x, p, cache, position, valid=None, *, d_model: str = "d_model", heads: str = "heads",
                     d_k: str = "d_k", memory_length: str = "memory_length"):
    """Causal multi-head attention of one new token per row over the cache: its key and value
    are written at `position` along `memory_length` (mi.dynamic_update_slice: each device
    writes its part; with the cache donated, in place), and it attends to the slots
    <= position that `valid` allows (mi.dot_product_attention with a mask: one query row
    against the cache). Returns (output [..., d_model], the updated cache)."""
    layer = "meshir.layers.cached_attention"
    p = checks.params(p, ["wq", "wk", "wv", "wo"], layer)
    checks.tensor(x, layer, "the input")
    checks.has_dims(x, [d_model], layer, "the input")
    if not isinstance(cache, (tuple, list)) or len(cache) != 2:
        raise checks.error(f"{layer}: the cache must be a (keys, values) pair, got {cache!r}", checks.MeshIRTypeError)
    keys, values = (checks.tensor(c, layer, what) for c, what in zip(cache, ("the keys", "the values")))
    rows = [Dim(n, s) for n, s in zip(x.names, x.shape) if n != d_model]
    for t, what in ((keys, "the keys"), (values, "the values")):
        checks.exact_dims(t, [*(d.name for d in rows), heads, memory_length, d_k], layer, what)
    h, k = Dim(heads, checks.size(p["wq"], heads)), Dim(d_k, checks.size(p["wq"], d_k))
    mem = Dim(memory_length, checks.size(keys, memory_length))
    one = Dim(memory_length, 1)
    q = einsum(x, p["wq"], output=[*rows, h, k])
    new_k = reshape(einsum(x, p["wk"], output=[*rows, h, k]), [*rows, h, one, k])
    new_v = reshape(einsum(x, p["wv"], output=[*rows, h, k]), [*rows, h, one, k])
    keys = dynamic_update_slice(keys, memory_length, position, new_k)
    values = dynamic_update_slice(values, memory_length, position, new_v)
    seen = less_equal(iota([mem], memory_length), position)
    if valid is not None:
        seen = select(valid, seen, constant(False, valid.dims, "i1"))
    query = Dim("query" if "query" not in x.names else "new_query", 1)  # the one new token, as a query length
    o = dot_product_attention(reshape(q, [*rows, h, query, k]), keys, values, query_length=query.name,
                              key_length=memory_length, key_dim=d_k, mask=seen)
    o = reshape(o, [*rows, h, k])
    return einsum(o, p["wo"], output=[*rows, Dim(d_model, checks.size(x, d_model))]), (keys, values)


def _masked_to_top_k(logits, dim: str, k: int):
    """`logits` with everything below the k-th largest along `dim` set to -inf."""
    kth = reduce_sum(top_k(logits, dim, (f"{dim}_top", k))[0] * one_hot(constant(k - 1, [], "i32"), Dim(f"{dim}_top", k)),
                     over=[f"{dim}_top"])
    return select(less_equal(kth, logits), logits, NEG_INF)


def choose(logits, dim: str = "vocab", *, seed=None, temperature: float = 1.0, top_k: int | None = None):
    """The next token (i32, `logits`' other dims): the argmax without a seed (greedy); with
    one, a sample of softmax(logits / temperature), restricted to the `top_k` most likely
    when given (mi.categorical: the same draw under every layout, a new one per seed)."""
    name = "meshir.layers.choose"
    checks.tensor(logits, name, "the logits")
    checks.has_dims(logits, [dim], name, "the logits")
    size = checks.size(logits, dim)
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not temperature > 0 \
            or math.isinf(temperature):
        raise checks.error(f"{name}: the temperature must be a finite number > 0, got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= size):
        raise checks.error(f"{name}: top_k must be an int in [1, {size}] (the size of '{dim}'), got {top_k!r}")
    if seed is None:
        return argmax(logits, dim)
    if top_k is not None and top_k < size:
        logits = _masked_to_top_k(logits, dim, top_k)
    return composites.categorical(logits, dim, seed, temperature=float(temperature))


def length_penalty(lengths, alpha: float):
    """GNMT's ((5 + length) / 6) ** alpha, of a float Tensor of lengths (1 when alpha is 0)."""
    return exp(log((lengths + 5.0) * (1.0 / 6.0)) * float(alpha)) if alpha else lengths * 0.0 + 1.0


def beam_step(scores, log_probs, *, beam: str = "beam", vocab: str = "vocab"):
    """One step of beam search: each beam's candidates scored `scores` [..., beam] +
    `log_probs` [..., beam, vocab], and the best `beam`-many over all candidates kept
    (ties to the lower beam, then the lower token: mi.top_k's order). Returns (new scores,
    parent beam [..., beam] i32, token [..., beam] i32)."""
    name = "meshir.layers.beam_step"
    checks.has_dims(log_probs, [beam, vocab], name, "the log-probabilities")
    width, size = checks.size(log_probs, beam), checks.size(log_probs, vocab)
    rows = [Dim(n, s) for n, s in zip(log_probs.names, log_probs.shape) if n not in (beam, vocab)]
    candidates = scores + log_probs
    if candidates.names != [*(d.name for d in rows), beam, vocab]:
        candidates = transpose(candidates, [*rows, Dim(beam, width), Dim(vocab, size)])
    flat = reshape(candidates, [*rows, Dim("candidates", width * size)])
    best, index = top_k(flat, "candidates", (beam, width))
    parent = div(index, size)
    return best, parent, sub(index, parent * size)


def reorder(t, parent, beam: str = "beam"):
    """`t` [..., beam, ...] with beam i taken from beam parent[..., i] (a one-hot einsum over
    the beams; integer tensors go through f32, exact for ids below 2**24)."""
    width = checks.size(t, beam)
    pick = one_hot(parent, Dim(f"{beam}_from", width), dtype="f32")  # [..., beam, beam_from]
    source = rename(t if t.type.is_float else cast(t, "f32"), beam, f"{beam}_from")
    out = einsum(pick, source, output=[Dim(n, s) for n, s in zip(t.names, t.shape)])
    return out if t.type.is_float else cast(out, t.dtype)
