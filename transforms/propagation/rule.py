"""`OpRule`: the factors and reshape groups of one op, as op_rules.py and loops.py build them
and the solver, conflicts and reshards read them."""
from __future__ import annotations

from dataclasses import dataclass, field

from meshir.dialect.layout_projection import ReshapeGroup

Member = tuple[int, str]  # (value id, dim name)


@dataclass
class OpRule:
    """The factors and reshape groups of one op."""

    op: object
    operands: list[int]
    results: list[int]
    factors: list[list[Member]] = field(default_factory=list)
    reshapes: list[ReshapeGroup] = field(default_factory=list)
    #: Dims in no factor (`MtfOp.unlinked_dims`, taken on the types as written).
    unlinked: set[str] = field(default_factory=set)
    #: Factors by name: an operand dim no result has is reduced over (contracted, looked up).
    by_name: bool = False
    #: The op's operand index of each of `operands` (None: all of them, in order).
    positions: list[int] | None = None
    #: A loop's carried value (loops.py): each factor's first member (a block argument, or a
    #: yielded y) is the layout every other member must take; `replicated` dims take none.
    carried: bool = False
    replicated: list[Member] = field(default_factory=list)

    def operand_positions(self) -> list[int]:
        return self.positions if self.positions is not None else list(range(len(self.operands)))
