"""VJPs of `mtf.shard` and the collectives: all are identities in global semantics, so the
cotangent flows through unchanged. The gradient carries no layouts: propagation decides how
the backward values are laid out (a forward constraint does not constrain its cotangent).
A *cut* (`mtf.shard {cut}`, mi.reshard) keeps its two sides apart in the backward pass too:
the cotangent goes back through a cut of the same dims, or the layouts of one side would
reach the other through the shared cotangent."""
from __future__ import annotations

from meshir.dialect.ops import COLLECTIVE_OP_NAMES, ShardOp

from .emitter import type_of
from .rules import vjp

IDENTITIES = ("mtf.shard", *sorted(COLLECTIVE_OP_NAMES))


@vjp(*IDENTITIES)
def _identity(em, op, ct, wanted):
    if op.operation.name == "mtf.shard" and "cut" in op.operation.attributes:
        return {0: em.emit(ShardOp, type_of(ct), [ct], {"cut": op.operation.attributes["cut"]})}
    return {0: ct}
