"""The state of one function's lowering, shared by the per-op rules.

A rule is `rule(program, op) -> Local`: it reads its operands' shards with
`program.operands(op)`, emits StableHLO through `program.b` and returns the result's shard.

A program sees either per-device shards (explicit mode: `mesh` is the function's mesh) or
global values (`mesh` is None: a function without a mesh, or gspmd mode). Rules ask the
program, not the type, where a dim is split (`split_axes`, `offsets`): in a global program
there is one device, every dim is whole and every block starts at 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from meshir.dialect.diagnostics import MeshIRError, located_error
from meshir.dialect.mesh import Mesh
from meshir.dialect.tensor_type import TensorType

from . import device
from .builder import Builder
from .types import Local, local_shape


@dataclass
class FunctionLowering:
    """One program being written: its builder, the mesh it is partitioned over (None for
    a global program) and its value map."""

    b: Builder
    mesh: Mesh | None
    values: dict = field(default_factory=dict)
    #: The rules and `after` hook of the function's block, for the loop bodies nested in it.
    rules: dict = field(default_factory=dict)
    after: object = None

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

    def lower_block(self, block, rules: dict | None = None, after=None) -> list[Local]:
        """Lower the ops of `block` with `rules` (op name -> rule; a loop body: the
        function's); return the values of its `func.return` or `mtf.yield`. `after(op, value,
        k)`, if given, may replace the value of each op's result k. A rule returns its
        result's value, or a list of them (a loop)."""
        if rules is None:
            rules, after = self.rules, self.after
        else:
            self.rules, self.after = rules, after
        for op in block.operations:
            name = op.operation.name
            if name in ("func.return", "mtf.yield"):
                return self.operands(op)
            self.b.location = str(op.location)
            rule = rules.get(name)
            if rule is None:
                raise op_error(op, "cannot be lowered to StableHLO (mtf-lower-to-stablehlo knows mtf ops only)")
            value = rule(self, op)
            for k, (result, v) in enumerate(zip(op.operation.results, value if isinstance(value, list) else [value])):
                self.values[result] = after(op, v, k) if after else v
        raise op_error(block.owner, "has no func.return")


def op_error(op, message: str) -> MeshIRError:
    """`file:line:col: error: 'mtf.x' op message`, located at the op."""
    return located_error(op.location, f"'{op.operation.name}' op {message}")
