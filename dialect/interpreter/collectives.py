"""`mtf.shard` and the collectives: in global semantics each is the identity (they change
the layout or settle a pending partial reduction, never the global value)."""
from __future__ import annotations

from ..op_registry import rule
from ..ops import OP_CLASSES
from ..ops.collectives import ShardOp


@rule("interpret", ShardOp, *(cls for cls in OP_CLASSES.values() if cls.IS_COLLECTIVE))
def identity(op, args):
    """The operand unchanged."""
    return args[0]
