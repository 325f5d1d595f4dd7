"""`mtf.shard` and the collectives: in global semantics each is the identity (they change
the layout or settle a pending partial reduction, never the global value)."""
from __future__ import annotations

from ..ops.collectives import COLLECTIVE_OP_NAMES, ShardOp


def identity(op, args):
    """The operand unchanged."""
    return args[0]


RULES = {name: identity for name in sorted(COLLECTIVE_OP_NAMES | {ShardOp.OPERATION_NAME})}
