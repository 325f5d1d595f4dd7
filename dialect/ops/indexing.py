"""Indexing ops: one_hot and gather (rows of a table by integer ids)."""
from __future__ import annotations

from ..diagnostics import VerifyError
from ..tensor_type import INTEGER_TYPES, Dimension, TensorType
from .base import MtfOp, mtf_op, names_text, same_sizes


def _check_ids(t, what="ids"):
    if t.element_type not in INTEGER_TYPES:
        raise VerifyError(f"{what} must have an integer element type (i32, i64), got {t.element_type}")


@mtf_op
class OneHotOp(MtfOp):
    """`mtf.one_hot`: out[..., k] = (ids[...] == k); the result's one extra name is the depth."""

    OPERATION_NAME = "mtf.one_hot"

    @property
    def depth_name(self) -> str:
        src = self.input_type
        return next(n for n in self.result_type.names if not src.has(n))

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        _check_ids(src)
        same_sizes([src, result], "operand and result")
        lost = [n for n in src.names if not result.has(n)]
        extra = [n for n in result.names if not src.has(n)]
        if lost or len(extra) != 1:
            raise VerifyError(
                f"result names {names_text(result.names)} must be the operand names {names_text(src.names)} "
                f"plus exactly one depth name"
            )


@mtf_op
class GatherOp(MtfOp):
    """`mtf.gather {dim}`: out[ids..., rest...] = table[dim = ids[ids...], rest...].

    Operands: (table, ids). The result has the ids' names and the table's names but `dim`.
    """

    OPERATION_NAME = "mtf.gather"
    OPERANDS = (2, 2)
    MEMORY = "materializes_operands"
    ATTRIBUTES = {"dim": "str"}
    LOOKUP_DIM_ATTRS = ("dim",)

    @property
    def table(self):
        return self.operation.operands[0]

    @property
    def ids(self):
        return self.operation.operands[1]

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        """The ids' dims, then the table's dims but the gathered one (free layouts)."""
        table, ids = operand_types
        dims = [Dimension(d.name, d.size) for d in ids.dims]
        dims += [Dimension(d.name, d.size) for d in table.dims if d.name != attrs["dim"] and not ids.has(d.name)]
        return TensorType(tuple(dims), table.element_type)

    def verify_op(self, mesh):
        table, ids = self.operand_types
        result = self.result_type
        dim = self.dim_attr("dim", table, "table")
        _check_ids(ids)
        if ids.has(dim):
            raise VerifyError(f"ids may not have the gathered dimension '{dim}'")
        shared = [n for n in ids.names if table.has(n)]
        if shared:
            raise VerifyError(f"ids and table share dimension(s) {names_text(shared)}: a batched lookup is not "
                              f"supported; rename the table's dimension")
        same_sizes([ids, result], "ids and result")
        rest = [d for d in table.dims if d.name != dim]
        same_sizes([table.with_dims(rest), result], "table and result")
        expected = set(ids.names) | {d.name for d in rest}
        if set(result.names) != expected:
            raise VerifyError(
                f"result names {names_text(result.names)} must be the ids' names and the table's names "
                f"except '{dim}': {names_text(sorted(expected))}"
            )
        if result.element_type != table.element_type:
            raise VerifyError(f"result element type must be the table's {table.element_type}, got {result.element_type}")
