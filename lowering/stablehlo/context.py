"""The state of one function's lowering, shared by the per-op rules.

A rule is `rule(program, op) -> Local`: it reads its operands' shards with
`program.operands(op)`, emits StableHLO through `program.b` and returns the result's shard.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from meshir.dialect.diagnostics import Diagnostic, MeshIRError
from meshir.dialect.mesh import Mesh
from meshir.dialect.tensor_type import TensorType

from .builder import Builder
from .types import Local, local_shape


@dataclass
class Program:
    """One per-device program being written: its builder, mesh and value map."""

    b: Builder
    mesh: Mesh | None
    values: dict = field(default_factory=dict)

    def local(self, value) -> Local:
        return self.values[value]

    def operands(self, op) -> list[Local]:
        return [self.values[v] for v in op.operation.operands]

    def shape(self, t: TensorType) -> tuple[int, ...]:
        """The shard shape of `t` on this program's mesh."""
        return local_shape(t, self.mesh)


def op_error(op, message: str) -> MeshIRError:
    """`file:line:col: error: 'mtf.x' op message`, located at the op."""
    diag = Diagnostic(op.location, f"'{op.operation.name}' op {message}")
    return MeshIRError(str(diag), [diag])
