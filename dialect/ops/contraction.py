"""Contractions and reductions: names missing from the result are summed (or maxed, minned)."""
from __future__ import annotations

from ..diagnostics import VerifyError
from .base import MtfOp, mtf_op, names_text, same_element_type, same_sizes
from .base import same_type_operand
from ..tensor_type import wider_floats
from .elementwise import NUMERIC


@mtf_op
class EinsumOp(MtfOp):
    """`mtf.einsum`: product of all operands, summed over the names absent from the result."""

    OPERATION_NAME = "mtf.einsum"
    PRECISION = "compute"
    MEMORY = "materializes_operands"
    OPERANDS = (1, None)
    REDUCTION = "sum"
    WORK = "index_space"
    LINEAR = {"sum": "one_factor"}  # multilinear: one pending factor

    @property
    def reduced_names(self) -> list[str]:
        """Names that appear in an operand but not in the result: the contracted ones."""
        out = set(self.result_type.names)
        seen: list[str] = []
        for t in self.operand_types:
            seen += [n for n in t.names if n not in out and n not in seen]
        return seen

    def verify_op(self, mesh):
        types, result = self.operand_types, self.result_type
        same_sizes(types + [result], "operands and result")
        elem = same_element_type(types)
        if elem not in NUMERIC:
            raise VerifyError(f"einsum needs numeric operands, got {elem}")
        # A float einsum may return a wider float: it then accumulates and returns that type
        # (StableHLO's dot_general with a wider result, JAX's preferred_element_type), so a
        # sum across devices moves the wide type (mi.Precision).
        wider_types = wider_floats(elem)
        if result.element_type != elem and result.element_type not in wider_types:
            wider = f" or a wider float ({', '.join(wider_types)})" if wider_types else ""
            raise VerifyError(f"result element type must be {elem}{wider}, got {result.element_type}")
        available = {n for t in types for n in t.names}
        missing = [n for n in result.names if n not in available]
        if missing:
            raise VerifyError(
                f"result names {names_text(missing)} appear in no operand (operand names: {names_text(sorted(available))})"
            )

    def fold(self):
        """One operand and the result's type: nothing multiplied, nothing summed."""
        return same_type_operand(self) if len(self.operation.operands) == 1 else None


class ReduceOp(MtfOp):
    """Reduce over the operand names absent from the result."""

    REDUCTION = "sum"
    WORK = "operand"

    @property
    def reduced_names(self) -> list[str]:
        out = set(self.result_type.names)
        return [n for n in self.input_type.names if n not in out]

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        same_sizes([src, result], "operand and result")
        extra = [n for n in result.names if not src.has(n)]
        if extra:
            raise VerifyError(
                f"result names {names_text(extra)} are not in the operand {names_text(src.names)}"
            )
        if src.element_type != result.element_type:
            raise VerifyError(f"result element type must be {src.element_type}, got {result.element_type}")
        if src.element_type == "i1" and self.REDUCTION == "sum":
            raise VerifyError("reduce_sum needs a numeric operand, got i1")

    def fold(self):
        """The operand's type as result: no name reduced, so every element is kept as is."""
        return same_type_operand(self)


@mtf_op
class ReduceSumOp(ReduceOp):
    """`mtf.reduce_sum`: sum over the names absent from the result."""

    OPERATION_NAME = "mtf.reduce_sum"
    PRECISION = "range"
    LINEAR = {"sum": "each"}


@mtf_op
class ReduceMaxOp(ReduceOp):
    """`mtf.reduce_max`: maximum over the names absent from the result."""

    OPERATION_NAME = "mtf.reduce_max"
    REDUCTION = "max"
    LINEAR = {"max": "alike"}


@mtf_op
class ReduceMinOp(ReduceOp):
    """`mtf.reduce_min`: minimum over the names absent from the result."""

    OPERATION_NAME = "mtf.reduce_min"
    REDUCTION = "min"
    LINEAR = {"min": "alike"}
