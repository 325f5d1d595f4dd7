"""Multi-head dot-product attention on named dims, Mesh-TensorFlow's way: keys and values
come from the memory with `length` renamed to `memory_length`, and one
mi.dot_product_attention computes softmax(q·k)·v over [..., heads, length, memory_length]
(causal: the last query lined up with the last key), blockwise by default: the weights are
never held whole.

Parameters (attention_params):

    multi-head         wq, wk, wv [d_model, heads, d_k]          wo [heads, d_k, d_model]
    grouped-query      wq [d_model, kv_heads, heads, d_k]        wo [kv_heads, heads, d_k, d_model]
    (kv_heads=Dim)     wk, wv [d_model, kv_heads, d_k]

With key/value heads shared, `heads` counts the query heads of each key/value head, so
kv_heads x heads query heads in all (multi-query attention: kv_heads of size 1). The layout
rules may split heads, kv_heads or both.
"""
from __future__ import annotations

from meshir.api.ops.attention import dot_product_attention
from meshir.api.ops.contraction import einsum
from meshir.api.ops.shape import rename
from meshir.api.programs.dims import Dim
from meshir.dialect.ops.attention import MASK_VALUE as ATTENTION_MASK_VALUE

from . import _checks as checks
from ._sequence_parallel import pin, scatter

__all__ = ["MASK_VALUE", "attention", "attention_params"]

#: The logit of a hidden key (exp underflows to 0; finite, so fully masked rows stay finite).
MASK_VALUE = ATTENTION_MASK_VALUE


def attention_params(d_model: Dim, heads: Dim, d_k: Dim, kv_heads: Dim | None = None) -> dict[str, list[Dim]]:
    """The parameters' dims, in argument order: wq, wk, wv, wo."""
    m, h, k = d_model, heads, d_k
    if kv_heads is None:
        return {"wq": [m, h, k], "wk": [m, h, k], "wv": [m, h, k], "wo": [h, k, m]}
    g = kv_heads
    return {"wq": [m, g, h, k], "wk": [m, g, k], "wv": [m, g, k], "wo": [g, h, k, m]}


def _dims(x, names) -> list[Dim]:
    return [Dim(n, s) for n, s in zip(x.names, x.shape) if n in names]


def attention(x, p, *, causal: bool = True, memory=None, d_model: str = "d_model", length: str = "length",
              memory_length: str = "memory_length", heads: str = "heads", d_k: str = "d_k",
              kv_heads: str | None = None, sequence_parallel: str | None = None, implementation: str | None = None):
    """Attention of the queries of x [..., length, d_model] over `memory` [..., length,
    d_model] (default: x itself; self-attention), returning [..., length, d_model].

    `causal`: a query at position i sees memory positions j <= i (the others get MASK_VALUE).
    `kv_heads`: the name of the key/value heads dim when they are shared (see the module).
    `sequence_parallel`: the mesh axis that splits the model dims and, between layers,
    `length` (Megatron's sequence parallelism): the matmuls' activations are pinned whole
    along the sequence and split along heads, and the output projection is reduce-scattered
    onto `length`. `implementation`: mi.dot_product_attention's (blockwise by default)."""
    layer = "meshir.layers.attention"
    p = checks.params(p, ["wq", "wk", "wv", "wo"], layer)
    checks.tensor(x, layer, "the input")
    checks.has_dims(x, [d_model, length], layer, "the input")
    shared = [kv_heads] if kv_heads else []
    checks.param_dims(p["wq"], [d_model, *shared, heads, d_k], x, layer, "the parameter 'wq'")
    for name in ("wk", "wv"):
        checks.param_dims(p[name], [d_model, *(shared or [heads]), d_k], x, layer, f"the parameter '{name}'")
    checks.param_dims(p["wo"], [*shared, heads, d_k, d_model], x, layer, "the parameter 'wo'")
    for name in ("wq", "wk", "wv", "wo"):
        checks.same_size(x, p[name], d_model, layer, "the input", f"the parameter '{name}'")
    source = x if memory is None else checks.tensor(memory, layer, "the memory")
    if memory is not None:
        checks.has_dims(memory, [d_model, length], layer, "the memory")
    if memory_length in x.names:
        raise checks.error(f"{layer}: the input {x.type} already has a dim '{memory_length}' (the memory's "
                           f"positions are named so)")

    batch = [Dim(n, s) for n, s in zip(x.names, x.shape) if n not in (d_model, length)]
    l = Dim(length, checks.size(x, length))
    mem = Dim(memory_length, checks.size(source, length))
    kv = _dims(p["wk"], [*shared, heads])
    qh = _dims(p["wq"], [*shared, heads])
    k = Dim(d_k, checks.size(p["wq"], d_k))
    sp = sequence_parallel
    q = pin(einsum(x, p["wq"], output=[*batch, l, *qh, k]), sp, length, heads)
    xm = rename(source, length, memory_length)
    key = pin(einsum(xm, p["wk"], output=[*batch, mem, *kv, k]), sp, memory_length, kv_heads or heads)
    value = pin(einsum(xm, p["wv"], output=[*batch, mem, *kv, k]), sp, memory_length, kv_heads or heads)
    o = dot_product_attention(q, key, value, query_length=length, key_length=memory_length, key_dim=d_k,
                              causal=causal, implementation=implementation)
    o = pin(o, sp, length, heads)
    m = Dim(d_model, checks.size(x, d_model))
    return scatter(einsum(o, p["wo"], output=[*batch, l, m]), sp, length)
