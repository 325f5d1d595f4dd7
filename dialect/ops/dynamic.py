"""Windows at a runtime position: dynamic_slice and dynamic_update_slice along a named dim.

The start is a 0-d i32 operand, read as `jax.lax.dynamic_slice` reads it: a negative start
counts from the end (start + size of dim), then it is clamped into [0, size of dim − size of
the window]. The window keeps the dim's name with its own size.

Along a dim split over axes A the operand stays split and only the devices whose blocks
overlap the window do the work (`kept_split_values`): for a slice each device takes the
part of the window in its block (zeros elsewhere) and one all-reduce over A of the window
completes it; for an update each device writes the part of the window in its block, with
no traffic beyond gathering the (small) update whole (docs/partitioning.md).
"""
from __future__ import annotations

from ..diagnostics import VerifyError
from ..tensor_type import TensorType
from .base import BYTES, MtfOp, mtf_op, names_text, shard_along


def _check_start(t: TensorType) -> None:
    if t.dims or t.element_type != "i32":
        raise VerifyError(f"start must be a 0-d i32 tensor, got {t}")


def _check_window(op, src: TensorType, window: TensorType, what: str) -> None:
    dim = op.dim_attr("dim", src)
    if window.names != src.names:
        raise VerifyError(f"{what} names {names_text(window.names)} must equal the operand's {names_text(src.names)}")
    if window.element_type != src.element_type:
        raise VerifyError(f"{what} element type {window.element_type} must be the operand's {src.element_type}")
    for d in src.dims:
        size = window.size(d.name)
        if d.name == dim and not 1 <= size <= d.size:
            raise VerifyError(f"the {what}'s '{dim}' has size {size}, not in [1, {d.size}] (the operand's)")
        if d.name != dim and size != d.size:
            raise VerifyError(f"'{d.name}' has size {d.size} in the operand but {size} in the {what}")


class _WindowOp(MtfOp):
    ATTRIBUTES = {"dim": "str", **BYTES}
    OPTIONAL = frozenset({"bytes_per_device"})
    WHOLE_DIM_ATTRS = ("dim",)
    UNLINKED_DIM_ATTRS = ("dim",)
    PIECE_DIM_ATTRS = ("dim",)
    MEMORY = "materializes_operands"


@mtf_op
class DynamicSliceOp(_WindowOp):
    """`mtf.dynamic_slice {dim}` (x, start): the window of x along `dim` at `start` (clamped);
    its size is the result's size of `dim`."""

    OPERATION_NAME = "mtf.dynamic_slice"
    OPERANDS = (2, 2)
    #: Along a split dim the window is completed by an all-reduce of each owner's part.
    MERGE_KIND = "all_reduce"
    MERGED = "window"

    def kept_split_values(self) -> tuple[frozenset[int], frozenset[int]]:
        """The operand keeps `dim` split; the window is computed whole."""
        return frozenset({0}), frozenset()

    def merged_dims(self) -> list[str]:
        return [self.attr("dim")]

    def merge_bytes(self, operand: TensorType, mesh_shape: dict[str, int]) -> int:
        """The ring all-reduce of the window (whole along `dim`, split as x on the others)."""
        n, _, others = shard_along(operand, self.attr("dim"), mesh_shape)
        window = others * self.result_type.size(self.attr("dim")) * operand.dtype.itemsize
        return 2 * (n - 1) * window // n

    def verify_op(self, mesh):
        src, start = self.operand_types
        _check_start(start)
        _check_window(self, src, self.result_type, "result")


@mtf_op
class DynamicUpdateSliceOp(_WindowOp):
    """`mtf.dynamic_update_slice {dim}` (x, update, start): x with `update` written along `dim`
    at `start` (clamped); the update's size of `dim` is the window's."""

    OPERATION_NAME = "mtf.dynamic_update_slice"
    OPERANDS = (3, 3)

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        return operand_types[0].without_layout()

    def kept_split_values(self) -> tuple[frozenset[int], frozenset[int]]:
        """The operand and the result keep `dim` split (each device writes its part); the
        update is gathered whole."""
        return frozenset({0}), frozenset({0})

    def verify_op(self, mesh):
        src, update, start = self.operand_types
        _check_start(start)
        _check_window(self, src, update, "update")
        result = self.result_type
        if not result.same_shape(src) or result.element_type != src.element_type:
            raise VerifyError(f"result {result} must have the operand's type {src}")
