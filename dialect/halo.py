"""Which dims an op computes along while they stay split: halo exchanges.

An op that reads only near each position along a dim (its `halos()`: a shift, later a
convolution window) need not hold that dim whole. Each device extends its block with `low`
rows from the block before it and `high` rows from the block after it, sent by those
neighbours, and computes locally. That is what `mtf-insert-collectives` keeps, the
partitioned verifier accepts and the lowering emits (`lowering/stablehlo/halo.py`), when the
rows fit in one neighbouring block; otherwise the dim is gathered whole.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .tensor_type import TensorType


@dataclass(frozen=True)
class Halo:
    """Along `dim`, split over `axes` into blocks of `block` rows, each device reads the last
    `low` rows of the block before its own and the first `high` rows of the block after."""

    dim: str
    axes: tuple[str, ...]
    block: int
    low: int
    high: int

    @property
    def fits(self) -> bool:
        """Both halos come from the adjacent block alone."""
        return self.low <= self.block and self.high <= self.block


def halos_of(op, types: list[TensorType], mesh_shape: dict[str, int]) -> dict[str, Halo]:
    """The op's halo dims that are split, alike in every operand and result holding them
    (`types`), as Halo records; whether each `fits` is the caller's question."""
    found = {}
    for dim, (low, high) in op.halos().items():
        layouts = {t.dim(dim).axes or () for t in types if t.has(dim)}
        if len(layouts) != 1:
            continue
        (axes,) = layouts
        if axes:
            size = next(t.size(dim) for t in types if t.has(dim))
            found[dim] = Halo(dim, axes, size // math.prod(mesh_shape[a] for a in axes), low, high)
    return found


def split_halos(op, types: list[TensorType], mesh_shape: dict[str, int]) -> dict[str, Halo]:
    """The dims the op computes along with a halo exchange on local shards: split alike in
    `types` (operands and results) with halos that fit in one neighbouring block."""
    return {dim: h for dim, h in halos_of(op, types, mesh_shape).items() if h.fits}
