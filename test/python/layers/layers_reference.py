"""Plain NumPy float64 references for the tests of meshir.layers: written from the papers'
formulas (and, for the mixture of experts, GShard's placement rule as an explicit loop over
groups, choices and tokens), sharing no code with the package."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def f64(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


# -- elementwise and normalisation ---------------------------------------------------------

def softmax(x, axis=-1):
    x = f64(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def gelu(x):
    """GELU, tanh approximation (GPT-2)."""
    x = f64(x)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def relu(x):
    return np.maximum(f64(x), 0.0)


def silu(x):
    x = f64(x)
    return x / (1.0 + np.exp(-x))


ACTIVATIONS = {"gelu": gelu, "relu": relu, "silu": silu}


def layer_norm(x, scale, bias=None, eps=1e-6):
    """Over the last axis."""
    x = f64(x)
    with np.errstate(invalid="ignore"):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        y = (x - mu) / np.sqrt(var + eps) * f64(scale)
    return y if bias is None else y + f64(bias)


def rms_norm(x, scale, eps=1e-6):
    """Over the last axis: x / sqrt(mean(x^2) + eps) * scale."""
    x = f64(x)
    with np.errstate(invalid="ignore"):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * f64(scale)


# -- embeddings ------------------------------------------------------------------------------

def embed(tokens, table, pos=None):
    """tokens [..., L] ints, table [V, M] -> [..., L, M]; ids outside [0, V) give zero rows."""
    table = f64(table)
    out = np.zeros(tokens.shape + (table.shape[1],))
    for idx in np.ndindex(tokens.shape):
        t = int(tokens[idx])
        if 0 <= t < table.shape[0]:
            out[idx] = table[t]
    return out if pos is None else out + f64(pos)


def tied_logits(x, table):
    """x [..., M], table [V, M] -> [..., V]."""
    return f64(x) @ f64(table).T


# -- attention -------------------------------------------------------------------------------

def attention(x, wq, wk, wv, wo, causal=True, memory=None):
    """Multi-head attention. x [B, L, M], memory [B, T, M] (default x), wq/wk/wv [M, H, K],
    wo [H, K, M] -> [B, L, M]: per batch and head, softmax(q k^T / sqrt(K) + mask) v, the
    masked logits (memory position > query position) -inf."""
    x = f64(x)
    mem = x if memory is None else f64(memory)
    L, T, K = x.shape[1], mem.shape[1], wq.shape[2]
    q = np.einsum("blm,mhk->bhlk", x, f64(wq))
    k = np.einsum("btm,mhk->bhtk", mem, f64(wk))
    v = np.einsum("btm,mhk->bhtk", mem, f64(wv))
    s = np.einsum("bhlk,bhtk->bhlt", q, k) / math.sqrt(K)
    if causal:
        s = np.where(np.arange(T)[None, :] <= np.arange(L)[:, None], s, -np.inf)
    return np.einsum("bhlt,bhtk,hkm->blm", softmax(s, -1), v, f64(wo))


def grouped_query_attention(x, wq, wk, wv, wo, causal=True):
    """Grouped-query attention. x [B, L, M], wq [M, G, H, K] (H query heads per key/value
    head), wk/wv [M, G, K], wo [G, H, K, M]: query head (g, h) attends with key/value head g."""
    x = f64(x)
    G, H = wq.shape[1], wq.shape[2]
    M, K = wq.shape[0], wq.shape[3]
    # Flatten the query heads and repeat each key/value head for its H query heads.
    q = f64(wq).reshape(M, G * H, K)
    k = np.repeat(f64(wk), H, axis=1)
    v = np.repeat(f64(wv), H, axis=1)
    o = f64(wo).reshape(G * H, K, -1)
    return attention(x, q, k, v, o, causal=causal)


# -- feed-forward ----------------------------------------------------------------------------

def ffn(x, w1, w2, b1=None, b2=None, w_gate=None, activation="gelu"):
    x = f64(x)
    act = ACTIVATIONS[activation]
    h = x @ f64(w1)
    if b1 is not None:
        h = h + f64(b1)
    h = act(x @ f64(w_gate)) * h if w_gate is not None else act(h)
    y = h @ f64(w2)
    return y if b2 is None else y + f64(b2)


# -- mixture of experts ----------------------------------------------------------------------

def capacity(group_size: int, experts: int, k: int, capacity_factor: float) -> int:
    """ceil(k * capacity_factor * group_size / experts), clamped to [1, group_size], in exact
    rational arithmetic on the factor as written (1.1 is 11/10)."""
    c = math.ceil(k * Fraction(repr(float(capacity_factor))) * group_size / experts)
    return max(1, min(group_size, c))


def expert(v, e, w1, w2, w_gate=None, activation="relu"):
    """Expert e's feed-forward layer on one token v [M]."""
    act = ACTIVATIONS[activation]
    h = v @ f64(w1)[e]
    h = act(v @ f64(w_gate)[e]) * h if w_gate is not None else act(h)
    return h @ f64(w2)[e]


def route(xg, router, k):
    """For one group xg [S, M]: (probs [S, E], experts [S, k] in decreasing probability,
    gates [S, k] renormalised over the k choices when k > 1)."""
    probs = softmax(f64(xg) @ f64(router), -1)
    order = np.argsort(-probs, axis=-1, kind="stable")[:, :k]
    top = np.take_along_axis(probs, order, -1)
    gates = top / (top.sum(-1, keepdims=True) + 1e-9) if k > 1 else top
    return probs, order, gates


def moe(x, router, w1, w2, w_gate=None, *, k, capacity_factor, activation=None, keep=None,
        token_major=False):
    """GShard's mixture of experts on x [G, S, M], one gating group per index of G, as an
    explicit loop. Returns (output [G, S, M], aux loss (unweighted), dropped fraction, the
    placements: a list of (group, token, expert, slot)).

    Within a group, every first choice (token order) is placed before any second choice, and
    so on; a choice takes its expert's next free slot, or is dropped if the expert already
    has `capacity` tokens. `keep(i, g, s)`: whether choice i of token s of group g is made at
    all (random second routing); default every one. `token_major`: place a token's choices
    together instead (the wrong order, used to show a test can tell the two apart)."""
    activation = activation or ("silu" if w_gate is not None else "relu")
    G, S, _ = x.shape
    E = router.shape[1]
    cap = capacity(S, E, k, capacity_factor)
    out = np.zeros(x.shape)
    aux_terms = np.zeros((G, E))
    made = placed = 0
    placements = []
    for g in range(G):
        probs, order, gates = route(x[g], router, k)
        density = np.bincount(order[:, 0], minlength=E) / S
        aux_terms[g] = density * probs.mean(0)
        count = np.zeros(E, dtype=int)
        sequence = ([(s, i) for s in range(S) for i in range(k)] if token_major
                    else [(s, i) for i in range(k) for s in range(S)])
        for s, i in sequence:
            if keep is not None and not keep(i, g, s):
                continue
            made += 1
            e = int(order[s, i])
            if count[e] >= cap:
                continue  # dropped: the expert is full
            placements.append((g, s, e, int(count[e])))
            count[e] += 1
            placed += 1
            out[g, s] += gates[s, i] * expert(f64(x[g, s]), e, w1, w2, w_gate, activation)
    aux = E * E * aux_terms.mean()
    return out, aux, 1.0 - placed / made, placements


def moe_dense(x, router, w1, w2, w_gate=None, *, k, activation=None):
    """Every token through each of its k chosen experts, weighted by its gates (no capacity)."""
    activation = activation or ("silu" if w_gate is not None else "relu")
    G, S, _ = x.shape
    out = np.zeros(x.shape)
    for g in range(G):
        _, order, gates = route(x[g], router, k)
        for s in range(S):
            for i in range(k):
                out[g, s] += gates[s, i] * expert(f64(x[g, s]), int(order[s, i]), w1, w2, w_gate, activation)
    return out
