"""What each op needs to be computable on local shards, and what its result then is.

- `along_dims`: dims an op cuts, joins or shifts along; they must be whole on every device.
- `result_partial`: the pending reduction the local op leaves: names an einsum contracts,
  a reduction reduces, or a gather looks up while they are split over axes A make the result
  pending over A, on top of what a (lazy) operand was pending over.
"""
from __future__ import annotations

from meshir.dialect.tensor_type import TensorType

ALONG_DIM_OPS = frozenset({"mtf.slice", "mtf.concat", "mtf.pad", "mtf.shift"})
REDUCTION_OF = {"mtf.reduce_sum": "sum", "mtf.reduce_max": "max", "mtf.reduce_min": "min", "mtf.einsum": "sum"}


def along_dims(op) -> list[str]:
    return [op.attr("dim")] if op.operation.name in ALONG_DIM_OPS else []


def result_partial(op, operand_types: list[TensorType], result: TensorType) -> tuple[tuple[str, ...], str]:
    """(pending axes, reduction) of the op's result computed locally."""
    name = op.operation.name
    pending = next((t for t in operand_types if t.partial), None)
    axes = list(pending.partial) if pending else []
    reduction = pending.partial_reduction if pending else "sum"
    if name in REDUCTION_OF:
        kept = set(result.names)
        for t in operand_types:
            for d in t.dims:
                if d.name not in kept:
                    axes += [a for a in d.axes or () if a not in axes]
        if len(axes) > (len(pending.partial) if pending else 0):
            reduction = REDUCTION_OF[name]
    elif name == "mtf.gather":
        table = operand_types[0]
        axes += [a for a in table.dim(op.attr("dim")).axes or () if a not in axes]
    return tuple(axes), reduction
