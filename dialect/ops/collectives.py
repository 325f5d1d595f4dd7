"""`mtf.shard` and the collectives. All work on global types: in global semantics each is the
identity; what they change is the layout (or the pending partial reduction), and each verifier
checks that the operand->result layout change is the one the collective performs."""
from __future__ import annotations

from ..diagnostics import VerifyError
from ..tensor_type import TensorType, format_axes
from .base import MtfOp, mtf_op

REDUCTIONS = ("sum", "max", "min")


def _axes(t: TensorType, name: str) -> tuple[str, ...]:
    return t.dim(name).axes or ()


def _layout_text(t: TensorType, name: str) -> str:
    return f"'{name}'@{format_axes(_axes(t, name))}"


class _GlobalIdentityOp(MtfOp):
    """Operand and result have the same names, sizes and element type."""

    def _check_same_tensor(self):
        src, result = self.input_type, self.result_type
        if not src.same_shape(result):
            raise VerifyError(f"operand {src} and result {result} must have the same dimensions")
        if src.element_type != result.element_type:
            raise VerifyError(f"result element type must be {src.element_type}, got {result.element_type}")
        return src, result

    def _check_unchanged_except(self, src, result, changed: set[str]):
        for d, r in zip(src.dims, result.dims):
            if d.name not in changed and (d.axes or ()) != (r.axes or ()):
                raise VerifyError(f"{self.short_name} may not change the layout of '{d.name}'")


@mtf_op
class ShardOp(_GlobalIdentityOp):
    """`mtf.shard`: constrain a value to the layout its result type states.

    `reshard = true` marks one left by propagation where two layouts meet; unlike a user's
    constraint, two of those on one value may differ.
    """

    OPERATION_NAME = "mtf.shard"
    ATTRIBUTES = {"reshard": "bool"}
    OPTIONAL = frozenset({"reshard"})
    DEFAULTS = {"reshard": False}

    def verify_op(self, mesh):
        self._check_same_tensor()


#: Every collective may record the bytes it sends per device (set by mtf-insert-collectives).
BYTES = {"bytes_per_device": "int"}


class _CollectiveOp(_GlobalIdentityOp):
    OPTIONAL = frozenset({"bytes_per_device"})

    @property
    def axes(self) -> tuple[str, ...]:
        return self.attr("axes")

    def _check_partial_cleared(self, src, result):
        reduction = self.attr("reduction")
        if reduction not in REDUCTIONS:
            raise VerifyError(f"reduction must be one of {', '.join(REDUCTIONS)}, got '{reduction}'")
        if src.partial_reduction != reduction and src.partial:
            raise VerifyError(f"reduction '{reduction}' does not match the operand's pending {src.partial_reduction}")
        missing = [a for a in self.axes if a not in src.partial]
        if missing:
            raise VerifyError(f"operand {src} is not partial over {format_axes(tuple(missing))}")
        left = tuple(a for a in src.partial if a not in self.axes)
        if result.partial != left:
            raise VerifyError(f"result must be partial over {format_axes(left) if left else 'no axes'}, got {result}")


@mtf_op
class AllReduceOp(_CollectiveOp):
    """`mtf.all_reduce {reduction, axes}`: complete a pending reduction over mesh axes."""

    OPERATION_NAME = "mtf.all_reduce"
    ATTRIBUTES = {"reduction": "str", "axes": "axes", **BYTES}

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        self.axes_on_mesh(self.axes, mesh)
        self._check_partial_cleared(src, result)
        self._check_unchanged_except(src, result, set())


@mtf_op
class AllGatherOp(_CollectiveOp):
    """`mtf.all_gather {dim, axes}`: un-split `dim` over its minor-most `axes`."""

    OPERATION_NAME = "mtf.all_gather"
    ATTRIBUTES = {"dim": "str", "axes": "axes", **BYTES}

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        self.axes_on_mesh(self.axes, mesh)
        dim = self.dim_attr("dim", src)
        before, k = _axes(src, dim), len(self.axes)
        if before[len(before) - k :] != self.axes or k > len(before):
            raise VerifyError(f"operand {_layout_text(src, dim)} does not end with the gathered axes {format_axes(self.axes)}")
        if _axes(result, dim) != before[: len(before) - k]:
            raise VerifyError(f"result layout of '{dim}' must be @{format_axes(before[: len(before) - k])}, got {_layout_text(result, dim)}")
        self._check_unchanged_except(src, result, {dim})
        if src.partial != result.partial:
            raise VerifyError("all_gather may not change the pending partial axes")


@mtf_op
class AllSliceOp(_CollectiveOp):
    """`mtf.all_slice {dim, axes}`: split `dim` further over `axes` (no data moves)."""

    OPERATION_NAME = "mtf.all_slice"
    ATTRIBUTES = {"dim": "str", "axes": "axes", **BYTES}

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        self.axes_on_mesh(self.axes, mesh)
        dim = self.dim_attr("dim", src)
        used = [a for a in self.axes if a in src.used_axes_list()]
        if used:
            raise VerifyError(f"mesh axis '{used[0]}' is already used by the operand {src}")
        want = _axes(src, dim) + self.axes
        if _axes(result, dim) != want:
            raise VerifyError(f"result layout of '{dim}' must be @{format_axes(want)}, got {_layout_text(result, dim)}")
        self._check_unchanged_except(src, result, {dim})
        if src.partial != result.partial:
            raise VerifyError("all_slice may not change the pending partial axes")


@mtf_op
class ReduceScatterOp(_CollectiveOp):
    """`mtf.reduce_scatter {reduction, dim, axes}`: complete a pending reduction over `axes`
    and split `dim` over them."""

    OPERATION_NAME = "mtf.reduce_scatter"
    ATTRIBUTES = {"reduction": "str", "dim": "str", "axes": "axes", **BYTES}

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        self.axes_on_mesh(self.axes, mesh)
        dim = self.dim_attr("dim", src)
        self._check_partial_cleared(src, result)
        want = _axes(src, dim) + self.axes
        if _axes(result, dim) != want:
            raise VerifyError(f"result layout of '{dim}' must be @{format_axes(want)}, got {_layout_text(result, dim)}")
        self._check_unchanged_except(src, result, {dim})


@mtf_op
class AllToAllOp(_CollectiveOp):
    """`mtf.all_to_all {src_dim, dst_dim, axes}`: move the minor-most `axes` of `src_dim`'s
    split onto `dst_dim`."""

    OPERATION_NAME = "mtf.all_to_all"
    ATTRIBUTES = {"src_dim": "str", "dst_dim": "str", "axes": "axes", **BYTES}

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        self.axes_on_mesh(self.axes, mesh)
        a = self.dim_attr("src_dim", src)
        b = self.dim_attr("dst_dim", src)
        if a == b:
            raise VerifyError(f"src_dim and dst_dim must differ, both are '{a}'")
        before, k = _axes(src, a), len(self.axes)
        if k > len(before) or before[len(before) - k :] != self.axes:
            raise VerifyError(f"operand {_layout_text(src, a)} does not end with the moved axes {format_axes(self.axes)}")
        if _axes(result, a) != before[: len(before) - k]:
            raise VerifyError(f"result layout of '{a}' must be @{format_axes(before[: len(before) - k])}, got {_layout_text(result, a)}")
        if _axes(result, b) != _axes(src, b) + self.axes:
            raise VerifyError(f"result layout of '{b}' must be @{format_axes(_axes(src, b) + self.axes)}, got {_layout_text(result, b)}")
        self._check_unchanged_except(src, result, {a, b})
        if src.partial != result.partial:
            raise VerifyError("all_to_all may not change the pending partial axes")


@mtf_op
class CollectivePermuteOp(_CollectiveOp):
    """`mtf.collective_permute`: re-map which device holds which shard; every device's shard
    keeps its local shape (e.g. `@x` -> `@y` with |x| = |y|, or `@(x,y)` -> `@(y,x)`)."""

    OPERATION_NAME = "mtf.collective_permute"
    ATTRIBUTES = BYTES

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        if src.partial != result.partial:
            raise VerifyError("collective_permute may not change the pending partial axes")
        if mesh is not None and src.local_shape(mesh.shape) != result.local_shape(mesh.shape):
            raise VerifyError(
                f"collective_permute keeps each device's shard shape: operand shard "
                f"{src.local_shape(mesh.shape)}, result shard {result.local_shape(mesh.shape)}"
            )


#: The op names of the collectives (`mtf.shard` is not one: it constrains, it moves nothing).
COLLECTIVE_OP_NAMES = frozenset(
    cls.OPERATION_NAME
    for cls in (AllReduceOp, AllGatherOp, ReduceScatterOp, AllSliceOp, AllToAllOp, CollectivePermuteOp)
)
