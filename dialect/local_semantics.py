"""What an op computed on local shards leaves pending, read from its traits.

Names an op reduces (its REDUCTION: einsum, reduce_*) or looks up (its LOOKUP_DIM_ATTRS:
gather) while they are split over axes A make the local result pending over A, on top of
what a (lazy) operand was already pending over. Dims an op computes along (its
WHOLE_DIM_ATTRS) must be whole on every device; see `MtfOp.whole_dims`.
"""
from __future__ import annotations

from .tensor_type import TensorType


def result_partial(op, operand_types: list[TensorType], result: TensorType) -> tuple[tuple[str, ...], str]:
    """(pending axes, reduction) of the op's result computed locally."""
    pending = next((t for t in operand_types if t.partial), None)
    axes = list(pending.partial) if pending else []
    reduction = pending.partial_reduction if pending else "sum"
    kind = getattr(op, "REDUCTION", None)
    if kind is not None:
        kept = set(result.names)
        for t in operand_types:
            for d in t.dims:
                if d.name not in kept:
                    axes += [a for a in d.axes or () if a not in axes]
        if len(axes) > (len(pending.partial) if pending else 0):
            reduction = kind
    for dim in op.lookup_dims() if hasattr(op, "lookup_dims") else ():
        axes += [a for a in operand_types[0].dim(dim).axes or () if a not in axes]
    return tuple(axes), reduction
