"""Megatron's sequence parallelism inside a layer, as constraints.

Between layers the activations have `length` split over the axis that splits the model dims
(heads, d_ff). Inside a layer, `pin` keeps each matmul's activations whole along the sequence
and split along the model dim: a constraint outranks the layout rules, and without it the
`length` split of the layer's input reaches the matmuls and propagation gathers the weights
instead of the activations. `scatter` reduce-scatters an output projection's sum onto
`length` (a reshard: the split does not flow back into the matmul). Without an axis both are
the identity.
"""
from __future__ import annotations

from meshir.api.ops.collectives import reshard, shard


def pin(h, axis: str | None, seq: str, model: str | None = None):
    """`h` with `seq` whole and, if given, `model` split over `axis` (identity without one)."""
    if axis is None:
        return h
    return shard(h, {seq: (), **({model: axis} if model else {})})


def scatter(out, axis: str | None, seq: str = "length"):
    """An output projection's result reduce-scattered onto `seq` over `axis`."""
    return out if axis is None else reshard(out, {seq: axis})
