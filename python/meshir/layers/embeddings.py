"""Token and position embeddings, and output logits tied to the token embedding.

    table:      [vocab, d_model]       (embedding_params)
    positions:  [length, d_model]
    embed(tokens [..., length], table)            -> [..., length, d_model]
    tied_logits(x [..., d_model], table)           -> [..., vocab]
"""
from __future__ import annotations

from meshir.api.ops.contraction import einsum
from meshir.api.ops.indexing import gather
from meshir.api.programs.dims import Dim

from . import _checks as checks

__all__ = ["embed", "embedding_params", "tied_logits"]


def embedding_params(vocab: Dim, d_model: Dim, length: Dim | None = None) -> dict[str, list[Dim]]:
    """`embed` [vocab, d_model], and `pos_embed` [length, d_model] when `length` is given
    (learned positions)."""
    out = {"embed": [vocab, d_model]}
    if length is not None:
        out["pos_embed"] = [length, d_model]
    return out


def embed(tokens, p, vocab: str = "vocab"):
    """The rows of `p["embed"]` [vocab, d_model] picked by the integer `tokens`, plus
    `p["pos_embed"]` [length, d_model] when there is one (it broadcasts by name over the
    tokens' other dims). Out-of-range ids give zero rows (mi.gather)."""
    layer = "meshir.layers.embed"
    p = checks.params(p, ["embed"], layer, optional=["pos_embed"])
    checks.tensor(tokens, layer, "the tokens")
    checks.has_dims(p["embed"], [vocab], layer, "the table 'embed'")
    x = gather(p["embed"], tokens, vocab)
    if "pos_embed" in p:
        checks.has_dims(x, p["pos_embed"].names, layer, "the embedded tokens")
        x = x + p["pos_embed"]
    return x


def tied_logits(x, table, vocab: str = "vocab", d_model: str = "d_model"):
    """Logits over `vocab` from x [..., d_model] and the token embedding [vocab, d_model]
    (the output projection is the embedding's transpose)."""
    layer = "meshir.layers.tied_logits"
    checks.tensor(x, layer, "the input")
    checks.tensor(table, layer, "the table")
    checks.has_dims(x, [d_model], layer, "the input")
    checks.exact_dims(table, [vocab, d_model], layer, "the table")
    checks.same_size(x, table, d_model, layer, "the input", "the table")
    out = [Dim(n, s) for n, s in zip(x.names, x.shape) if n != d_model] + [Dim(vocab, checks.size(table, vocab))]
    return einsum(x, table, output=out)
