"""VJPs of `mtf.shard` and the collectives: all are identities in global semantics, so the
cotangent flows through unchanged. The gradient carries no layouts: propagation decides how
the backward values are laid out (a forward constraint does not constrain its cotangent).
A *cut* (`mtf.shard {cut}`, mi.reshard) keeps its two sides apart in the backward pass too:
the cotangent goes back through a cut of the same dims, or the layouts of one side would
reach the other through the shared cotangent."""
from __future__ import annotations

from meshir.dialect.ops import OP_CLASSES, ShardOp

from .emitter import type_of
from .rules import vjp

IDENTITIES = (ShardOp, *(cls for cls in OP_CLASSES.values() if cls.IS_COLLECTIVE))


@vjp(*IDENTITIES)
def _identity(em, op, ct, wanted):
    if isinstance(op, ShardOp) and "cut" in op.operation.attributes:
        return {0: em.emit(ShardOp, type_of(ct), [ct], {"cut": op.operation.attributes["cut"]})}
    return {0: ct}
