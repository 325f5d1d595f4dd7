"""Cumulative sums and products along a dim (jax.lax.cumsum / cumprod, with `exclusive`).

`reverse` accumulates from the end; `exclusive` leaves each element out of its own
position (the first position holds 0, or 1 for a product). On a dim split over axes A,
each device scans its block, the blocks' totals are gathered over A (one value per device
at every position of the other dims), and each device combines the totals of the blocks
before it (after it, reversed) with its own scan: the bytes moved do not grow with the dim
(`merge_bytes`, recorded as `bytes_per_device`; docs/partitioning.md).
"""
from __future__ import annotations

from ..diagnostics import VerifyError
from ..tensor_type import TensorType
from .base import BYTES, MtfOp, mtf_op, shard_along
from .elementwise import NUMERIC


class _CumulativeOp(MtfOp):
    ATTRIBUTES = {"dim": "str", "exclusive": "bool", "reverse": "bool", **BYTES}
    OPTIONAL = frozenset({"exclusive", "reverse", "bytes_per_device"})
    DEFAULTS = {"exclusive": False, "reverse": False}
    MEMORY = "materializes_operands"
    WORK = "operand"
    #: "sum" or "prod".
    KIND = "sum"
    #: What the merge along a split dim gathers (the compile report's detail).
    MERGED = "block totals"

    def merged_dims(self) -> list[str]:
        return [self.attr("dim")]

    def merge_bytes(self, operand: TensorType, mesh_shape: dict[str, int]) -> int:
        """Bytes one device sends to gather its group's block totals (one element per device
        at every position of the other dims), 0 when `dim` is whole."""
        n, _, others = shard_along(operand, self.attr("dim"), mesh_shape)
        return (n - 1) * others * operand.dtype.itemsize

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        return operand_types[0].without_layout()

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        if src.element_type not in NUMERIC:
            raise VerifyError(f"{self.short_name} needs a numeric operand, got {src.element_type}")
        self.dim_attr("dim", src)
        if not src.same_shape(result) or src.element_type != result.element_type:
            raise VerifyError(f"result {result} must have the operand's dims and element type ({src})")


@mtf_op
class CumsumOp(_CumulativeOp):
    """`mtf.cumsum {dim, exclusive, reverse}`: running sums along `dim`."""

    OPERATION_NAME = "mtf.cumsum"
    PRECISION = "range"


@mtf_op
class CumprodOp(_CumulativeOp):
    """`mtf.cumprod {dim, exclusive, reverse}`: running products along `dim`."""

    OPERATION_NAME = "mtf.cumprod"
    KIND = "prod"
    PRECISION = "range"
