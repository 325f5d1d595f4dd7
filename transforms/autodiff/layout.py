"""VJPs of `mtf.shard` and the collectives: all are identities in global semantics, so the
cotangent flows through unchanged. The gradient carries no layouts: propagation decides how
the backward values are laid out (a forward constraint does not constrain its cotangent)."""
from __future__ import annotations

from meshir.dialect.ops import COLLECTIVE_OP_NAMES

from .rules import vjp

IDENTITIES = ("mtf.shard", *sorted(COLLECTIVE_OP_NAMES))


@vjp(*IDENTITIES)
def _identity(em, op, ct, wanted):
    return {0: ct}
