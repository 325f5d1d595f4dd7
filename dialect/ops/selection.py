"""Selection along a dim: top_k (the k largest, with their indices) and argmax/argmin.

Orders are jax's: top_k ranks floats in IEEE total order as `jax.lax.top_k` does (+NaN above
+inf, -NaN below -inf, -0 below +0); argmax/argmin rank as `jnp.argmax`/`jnp.argmin` do (any
NaN wins, -0 equals +0). Ties go to the lowest index; indices are i32 into the whole dim.

On a dim split over axes A, each device selects among its block first; then the group's
candidates (k values and their global indices per device) are gathered over A and selected
again, so the bytes moved grow with k, not with the dim (`merge_bytes`; the op records
them as `bytes_per_device`, docs/partitioning.md "Selection along a split dim").
"""
from __future__ import annotations

from ..diagnostics import VerifyError
from ..tensor_type import TensorType
from .base import BYTES, MtfOp, mtf_op, names_text, shard_along
from .elementwise import NUMERIC


class _SelectOp(MtfOp):
    """Selects along `dim` of its one operand; the result has the operand's other dims."""

    ATTRIBUTES = {"dim": "str", **BYTES}
    OPTIONAL = frozenset({"bytes_per_device"})
    MEMORY = "materializes_operands"
    WORK = "operand"
    #: "total" (jax.lax.top_k) or "numeric" (jnp.argmax: any NaN first, -0 equals +0).
    ORDER = "total"
    #: Largest first (top_k, argmax) or smallest first (argmin).
    LARGEST = True

    @property
    def k(self) -> int:
        raise NotImplementedError

    def merged_dims(self) -> list[str]:
        """The dim selected along: split, it stays split and the candidates are merged."""
        return [self.attr("dim")]

    MERGED = "candidates"

    def merge_bytes(self, operand: TensorType, mesh_shape: dict[str, int]) -> int:
        """Bytes one device sends to gather its group's candidates (k values and their i32
        indices per device, at every position of the other dims), 0 when `dim` is whole."""
        n, block, others = shard_along(operand, self.attr("dim"), mesh_shape)
        return (n - 1) * others * min(self.k, block) * (operand.dtype.itemsize + 4)

    def _check_operand(self) -> TensorType:
        src = self.input_type
        if src.element_type not in NUMERIC:
            raise VerifyError(f"{self.short_name} needs a numeric operand, got {src.element_type}")
        self.dim_attr("dim", src)
        return src


@mtf_op
class TopKOp(_SelectOp):
    """`mtf.top_k {dim}`: (values, indices) of the k largest along `dim`, in descending order;
    the results replace `dim` by one new name of size k, in its place."""

    OPERATION_NAME = "mtf.top_k"
    RESULTS = 2

    @property
    def k_dim(self) -> str:
        src = self.input_type
        return next(n for n in self.result_types[0].names if not src.has(n))

    @property
    def k(self) -> int:
        return self.result_types[0].size(self.k_dim)

    def whole_dims(self) -> list[str]:
        """The k dim: each device computes all k (a layout rule on it splits the results after)."""
        return [self.k_dim]

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        src, dim, k_dim = operand_types[0], attrs["dim"], attrs["k_dim"]
        dims = tuple(k_dim if d.name == dim else d for d in src.without_layout().dims)
        return [TensorType(dims, src.element_type), TensorType(dims, "i32")]

    def verify_op(self, mesh):
        src = self._check_operand()
        dim = self.attr("dim")
        values, indices = self.result_types
        if values.element_type != src.element_type:
            raise VerifyError(f"values must have the operand's element type {src.element_type}, got {values.element_type}")
        if indices.element_type != "i32":
            raise VerifyError(f"indices must have element type i32, got {indices.element_type}")
        if values.names != indices.names or values.shape != indices.shape:
            raise VerifyError(f"values {values} and indices {indices} must have the same dimensions")
        want = [n for n in src.names]
        new = [n for n in values.names if not src.has(n)]
        if len(new) != 1 or [dim if n == new[0] else n for n in values.names] != want:
            raise VerifyError(f"result names {names_text(values.names)} must be the operand's "
                              f"{names_text(src.names)} with '{dim}' replaced by one new name (the k dim)")
        k = values.size(new[0])
        if not 1 <= k <= src.size(dim):
            raise VerifyError(f"k = {k} (the size of '{new[0]}') must be in [1, {src.size(dim)}], the size of '{dim}'")
        for d in src.dims:
            if d.name != dim and values.size(d.name) != d.size:
                raise VerifyError(f"'{d.name}' has size {d.size} in the operand but {values.size(d.name)} in the results")


@mtf_op
class ArgMaxOp(_SelectOp):
    """`mtf.argmax {dim}`: the i32 index along `dim` of the largest element (the first NaN,
    else the first of equal maxima), as jnp.argmax; the result has the operand's other dims."""

    OPERATION_NAME = "mtf.argmax"
    ORDER = "numeric"

    @property
    def k(self) -> int:
        return 1

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        src = operand_types[0]
        return TensorType(tuple(d for d in src.without_layout().dims if d.name != attrs["dim"]), "i32")

    def verify_op(self, mesh):
        src = self._check_operand()
        result = self.result_type
        if result.element_type != "i32":
            raise VerifyError(f"result element type must be i32, got {result.element_type}")
        want = src.with_dims([d for d in src.dims if d.name != self.attr("dim")])
        if not want.same_shape(result):
            raise VerifyError(f"result {result} must have the operand's dims but '{self.attr('dim')}' "
                              f"({names_text(want.names)})")


@mtf_op
class ArgMinOp(ArgMaxOp):
    """`mtf.argmin {dim}`: as argmax, of the smallest element (the first NaN, as jnp.argmin)."""

    OPERATION_NAME = "mtf.argmin"
    LARGEST = False
