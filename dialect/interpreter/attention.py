"""Rules of dot-product attention and its gradient: the weights in full, in NumPy.

Canonical axes: [batch..., query, key, d] with the batch dims in q's order; bf16/f16 in f32,
rounded once. The gradient is the textbook one: dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P ∘ (dP − rowsum(dO
∘ O)), and dS (zero where a logit was hidden, which depends on neither q nor k) gives dQ, dK
and the bias's cotangent (summed over the dims the bias lacks).
"""
from __future__ import annotations

import numpy as np

from ..op_registry import rule
from ..ops.attention import MASK_VALUE, DotProductAttentionGradOp, DotProductAttentionOp
from .arrays import align, widen


class _Canonical:
    """The op's operands on canonical axes, and the way back."""

    def __init__(self, op, args):
        q_t, k_t, v_t = op.operand_types[:3]
        self.length, self.keys = op.attr("query_length"), op.attr("key_length")
        self.key_dim, self.value_dim = op.attr("key_dim"), op.attr("value_dim")
        self.batch = [n for n in q_t.names if n not in (self.length, self.key_dim)]
        self.q = align(widen(args[0]), q_t.names, [*self.batch, self.length, self.key_dim])
        self.k = align(widen(args[1]), k_t.names, [*self.batch, self.keys, self.key_dim])
        self.v = align(widen(args[2]), v_t.names, [*self.batch, self.keys, self.value_dim])
        shape = self.q.shape[:-2]  # a key or value shared by several query heads, broadcast
        self.k = np.broadcast_to(self.k, shape + self.k.shape[-2:])
        self.v = np.broadcast_to(self.v, shape + self.v.shape[-2:])
        weights = [*self.batch, self.length, self.keys]
        self.weights = weights
        L, M = self.q.shape[-2], self.k.shape[-2]
        seen = np.ones((L, M), dtype=bool)
        if op.attr("causal"):
            seen = np.arange(M)[None, :] <= np.arange(L)[:, None] + (M - L)
        i = op.extra_index("mask")
        if i is not None:
            seen = seen & align(args[i], op.operand_types[i].names, weights)
        self.seen = np.broadcast_to(seen, self.q.shape[:-2] + (L, M))
        i = op.extra_index("bias")
        self.bias_names = None if i is None else op.operand_types[i].names
        self.bias = 0.0 if i is None else align(widen(args[i]), self.bias_names, weights)
        self.scale = np.float32(op.attr("scale")).astype(self.q.dtype)

    def probabilities(self) -> np.ndarray:
        with np.errstate(all="ignore"):
            logits = np.einsum("...ld,...md->...lm", self.q, self.k) * self.scale + self.bias
            logits = np.where(self.seen, logits, np.asarray(MASK_VALUE, logits.dtype))
            e = np.exp(logits - logits.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

    def back(self, array: np.ndarray, canonical, names, dtype) -> np.ndarray:
        """`array` on `canonical` axes, summed over those `names` lacks and moved to `names`."""
        extra = tuple(i for i, n in enumerate(canonical) if n not in names)
        kept = [n for n in canonical if n in names]
        array = array.sum(axis=extra) if extra else array
        return np.ascontiguousarray(np.transpose(array, [kept.index(n) for n in names])).astype(dtype)


@rule("interpret", DotProductAttentionOp)
def dot_product_attention(op, args):
    c = _Canonical(op, args)
    with np.errstate(all="ignore"):
        out = np.einsum("...lm,...md->...ld", c.probabilities(), c.v)
    return c.back(out, [*c.batch, c.length, c.value_dim], op.result_type.names, args[0].dtype)


@rule("interpret", DotProductAttentionGradOp)
def dot_product_attention_grad(op, args):
    c = _Canonical(op, args)
    out_t, ct_t = op.operand_types[-2:]
    rows = [*c.batch, c.length, c.value_dim]
    out, ct = (align(widen(a), t.names, rows) for a, t in zip(args[-2:], (out_t, ct_t)))
    with np.errstate(all="ignore"):
        p = c.probabilities()
        dv = np.einsum("...lm,...ld->...md", p, ct)
        dp = np.einsum("...ld,...md->...lm", ct, c.v)
        ds = p * (dp - (ct * out).sum(axis=-1, keepdims=True))
        ds = np.where(c.seen, ds, 0)
        dq = np.einsum("...lm,...md->...ld", ds, c.k) * c.scale
        dk = np.einsum("...lm,...ld->...md", ds, c.q) * c.scale
    q_t, k_t, v_t = op.operand_types[:3]
    grads = [c.back(dq, [*c.batch, c.length, c.key_dim], q_t.names, args[0].dtype),
             c.back(dk, [*c.batch, c.keys, c.key_dim], k_t.names, args[1].dtype),
             c.back(dv, [*c.batch, c.keys, c.value_dim], v_t.names, args[2].dtype)]
    i = op.extra_index("bias")
    if i is not None:
        grads.append(c.back(ds, c.weights, c.bias_names, args[i].dtype))
    return grads
