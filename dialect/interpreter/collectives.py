"""`mtf.shard` and the collectives: in global semantics each is the identity (they change
the layout or settle a pending partial reduction, never the global value)."""
from __future__ import annotations

from ..ops.collectives import (
    AllGatherOp,
    AllReduceOp,
    AllSliceOp,
    AllToAllOp,
    CollectivePermuteOp,
    ReduceScatterOp,
    ShardOp,
)


def identity(op, args):
    """The operand unchanged."""
    return args[0]


RULES = {
    cls.OPERATION_NAME: identity
    for cls in (ShardOp, AllReduceOp, AllGatherOp, ReduceScatterOp, AllSliceOp, AllToAllOp, CollectivePermuteOp)
}
