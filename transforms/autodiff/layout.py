"""VJPs of `mtf.shard` and the collectives: all are identities in global semantics, so the
cotangent flows through unchanged. The gradient carries no layouts: propagation decides how
the backward values are laid out (a forward constraint does not constrain its cotangent)."""
from __future__ import annotations

from .rules import vjp

IDENTITIES = ("mtf.shard", "mtf.all_reduce", "mtf.all_gather", "mtf.reduce_scatter", "mtf.all_slice",
              "mtf.all_to_all", "mtf.collective_permute")


@vjp(*IDENTITIES)
def _identity(em, op, ct, wanted):
    return {0: ct}
