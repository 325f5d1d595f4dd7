"""Index every SSA value of a function: stable integer ids in program order, so the
solver's tie-breaks (and therefore the output) are deterministic."""
from __future__ import annotations

from dataclasses import dataclass, field

from meshir._jax_private import ir
from meshir.dialect.tensor_type import TensorType


@dataclass
class ValueInfo:
    """One `!mtf.tensor` value: its id, type and where it comes from."""

    index: int
    value: ir.Value
    type: TensorType
    owner: object | None  # the defining op's OpView, None for a block argument
    location: object

    @property
    def size(self) -> int:
        return self.type.num_elements


@dataclass
class FunctionValues:
    """Ids of all `!mtf.tensor` values of one function body, arguments first."""

    values: list[ValueInfo] = field(default_factory=list)
    by_value: dict = field(default_factory=dict)
    ops: list = field(default_factory=list)  # every op of the body, nested ones too, in order

    def id_of(self, value: ir.Value) -> int | None:
        return self.by_value.get(value)

    def add(self, value: ir.Value, owner, location) -> None:
        try:
            t = TensorType.from_mlir(value.type)
        except ValueError:
            return
        info = ValueInfo(len(self.values), value, t, owner, location)
        self.values.append(info)
        self.by_value[value] = info.index


def index_function(fn) -> FunctionValues:
    """All values of `fn`'s single block and of the loop bodies nested in it, in program
    order (a loop's body before its results)."""
    out = FunctionValues()
    _index_block(fn.regions[0].blocks[0], out)
    return out


def _index_block(block, out: FunctionValues) -> None:
    for arg in block.arguments:
        out.add(arg, None, arg.location)
    for op in block.operations:
        out.ops.append(op)
        for region in op.operation.regions:
            for inner in region.blocks:
                _index_block(inner, out)
        for result in op.operation.results:
            out.add(result, op, op.location)
