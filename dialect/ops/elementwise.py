"""Elementwise ops. Operands broadcast by name: the result has the union of operand names,
in the order the result type gives, and every shared name must have one size."""
from __future__ import annotations

from ..diagnostics import VerifyError
from ..tensor_type import FLOAT_TYPES, INTEGER_TYPES
from .base import MtfOp, mtf_op, names_text, same_element_type, same_sizes

NUMERIC = FLOAT_TYPES | INTEGER_TYPES
ALL_TYPES = NUMERIC | {"i1"}


class ElementwiseOp(MtfOp):
    """Shared rules: result names = union of operand names, one size per name."""

    #: Element types the operands may have.
    OPERAND_TYPES: frozenset[str] = frozenset(NUMERIC)
    #: The result's element type, or None when it equals the operands'.
    RESULT_ELEMENT: str | None = None
    #: Operand indices that must share the element type.
    SAME_ELEMENT_OPERANDS: tuple[int, ...] | None = None

    @property
    def lhs(self):
        return self.operation.operands[0]

    @property
    def rhs(self):
        return self.operation.operands[1]

    def verify_op(self, mesh):
        types = self.operand_types
        result = self.result_type
        same_sizes(types + [result], "operands and result")
        expected = {n for t in types for n in t.names}
        if set(result.names) != expected:
            raise VerifyError(
                f"result names {names_text(result.names)} must be the union of the operand names "
                f"{names_text(sorted(expected))}"
            )
        checked = [types[i] for i in (self.SAME_ELEMENT_OPERANDS or range(len(types)))]
        elem = same_element_type(checked)
        if elem not in self.OPERAND_TYPES:
            allowed = ", ".join(sorted(self.OPERAND_TYPES))
            raise VerifyError(f"operand element type {elem} is not supported (expected one of {allowed})")
        want = self.RESULT_ELEMENT or elem
        if result.element_type != want:
            raise VerifyError(f"result element type must be {want}, got {result.element_type}")


def _elementwise(name: str, arity: int, operand_types, result_element=None, doc=""):
    cls = type(
        name.title().replace("_", "") + "Op",
        (ElementwiseOp,),
        {
            "OPERATION_NAME": f"mtf.{name}",
            "OPERANDS": (arity, arity),
            "OPERAND_TYPES": frozenset(operand_types),
            "RESULT_ELEMENT": result_element,
            "__doc__": doc or f"`mtf.{name}`: elementwise {name}.",
        },
    )
    return mtf_op(cls)


#: Unary op name -> element types it accepts.
UNARY_OPS = {
    "neg": NUMERIC,
    "abs": NUMERIC,
    "sign": NUMERIC,
    "relu": NUMERIC,
    "exp": FLOAT_TYPES,
    "log": FLOAT_TYPES,
    "sqrt": FLOAT_TYPES,
    "rsqrt": FLOAT_TYPES,
    "tanh": FLOAT_TYPES,
    "logistic": FLOAT_TYPES,
    "sin": FLOAT_TYPES,
    "cos": FLOAT_TYPES,
    "floor": FLOAT_TYPES,
    "stop_gradient": ALL_TYPES,
}
BINARY_OPS = {
    "add": NUMERIC,
    "sub": NUMERIC,
    "mul": NUMERIC,
    "div": NUMERIC,
    "max": ALL_TYPES,
    "min": ALL_TYPES,
    "pow": NUMERIC,
}
COMPARE_OPS = ("eq", "ne", "lt", "le", "gt", "ge")

UNARY_CLASSES = {n: _elementwise(n, 1, t) for n, t in UNARY_OPS.items()}
BINARY_CLASSES = {n: _elementwise(n, 2, t) for n, t in BINARY_OPS.items()}
COMPARE_CLASSES = {
    n: _elementwise(n, 2, ALL_TYPES, "i1", f"`mtf.{n}`: elementwise comparison, result i1.") for n in COMPARE_OPS
}


@mtf_op
class CastOp(ElementwiseOp):
    """`mtf.cast`: convert the element type (float->int truncates toward zero)."""

    OPERATION_NAME = "mtf.cast"
    OPERAND_TYPES = frozenset(ALL_TYPES)

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        if not src.same_shape(result) and set(src.names) != set(result.names):
            raise VerifyError(f"result names {names_text(result.names)} must equal operand names {names_text(src.names)}")
        same_sizes([src, result], "operand and result")


@mtf_op
class SelectOp(ElementwiseOp):
    """`mtf.select(cond, on_true, on_false)`: `on_true` where cond (i1) holds."""

    OPERATION_NAME = "mtf.select"
    OPERANDS = (3, 3)
    OPERAND_TYPES = frozenset(ALL_TYPES)
    SAME_ELEMENT_OPERANDS = (1, 2)

    def verify_op(self, mesh):
        if self.operand_types[0].element_type != "i1":
            raise VerifyError(f"condition must have element type i1, got {self.operand_types[0].element_type}")
        super().verify_op(mesh)

    @property
    def condition(self):
        return self.operation.operands[0]

    @property
    def on_true(self):
        return self.operation.operands[1]

    @property
    def on_false(self):
        return self.operation.operands[2]
