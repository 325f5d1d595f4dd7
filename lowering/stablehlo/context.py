"""The state of one function's lowering, shared by the per-op rules.

A rule is `rule(program, op)`, registered by op class in the "lower" (or "lower_global") slot
of dialect/op_registry.py by its family module. It reads its operands' shards with
`program.operands(op)`, emits StableHLO through `program.b` and returns the result's Local,
or, for an op with several results (a loop), a list of Locals, one per result in order.

A program sees either per-device shards (explicit mode: `mesh` is the function's mesh) or
global values (`mesh` is None: a function without a mesh, or gspmd mode). Rules ask the
program, not the type, where a dim is split (`split_axes`, `offsets`): in a global program
there is one device, every dim is whole and every block starts at 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from meshir.dialect.diagnostics import MeshIRError, located_error
from meshir.dialect.mesh import Mesh
from meshir.dialect import op_registry
from meshir.dialect.ops import OP_CLASSES, YieldOp
from meshir.dialect.tensor_type import TensorType

from . import device
from .builder import Builder
from .types import Local, local_shape


@dataclass
class FunctionLowering:
    """One program being written: its builder, the mesh it is partitioned over (None for
    a global program), its value map, and how its ops are lowered: `rule_for(op)` gives an
    op's rule (None: the op has none) and `after(op, value, k)`, if given, may replace the
    value of each op's result k. Loop bodies are lowered alike, with the function's."""

    b: Builder
    mesh: Mesh | None
    rule_for: Callable
    after: Callable | None = None
    values: dict = field(default_factory=dict)

    def local(self, value) -> Local:
        return self.values[value]

    def operands(self, op) -> list[Local]:
        return [self.values[v] for v in op.operation.operands]

    def shape(self, t: TensorType) -> tuple[int, ...]:
        """The shard shape of `t` on this program's mesh."""
        return local_shape(t, self.mesh)

    def split_axes(self, t: TensorType, axis: int) -> tuple[str, ...]:
        """The mesh axes dim `axis` of `t` is split over in this program (none when global)."""
        return (t.dims[axis].axes or ()) if self.mesh is not None else ()

    def is_split(self, t: TensorType) -> bool:
        """True when the program holds different blocks of `t` on different devices."""
        return self.mesh is not None and device.is_split(t)

    def offsets(self, t: TensorType) -> list[Local]:
        """The first global index of this program's block along every dim of `t`."""
        return device.dim_offsets(self.b, self.mesh, t)

    def lower_block(self, block) -> list[Local]:
        """Lower the ops of `block`; return the values of its `func.return` or `mtf.yield`."""
        for op in block.operations:
            if isinstance(op, YieldOp) or op.operation.name == "func.return":
                return self.operands(op)
            self.b.location = str(op.location)
            rule = self.rule_for(op)
            if rule is None:
                if op.operation.name in OP_CLASSES:
                    raise op_error(op, f"cannot be lowered to StableHLO: {op_registry.missing_rule('lower', op)}")
                raise op_error(op, "cannot be lowered to StableHLO (mtf-lower-to-stablehlo knows mtf ops only)")
            value = rule(self, op)
            values = value if isinstance(value, list) else [value]
            for k, (result, v) in enumerate(zip(op.operation.results, values, strict=True)):
                self.values[result] = self.after(op, v, k) if self.after else v
        raise op_error(block.owner, "has no func.return")


def op_error(op, message: str) -> MeshIRError:
    """`file:line:col: error: 'mtf.x' op message`, located at the op."""
    return located_error(op.location, f"'{op.operation.name}' op {message}")
