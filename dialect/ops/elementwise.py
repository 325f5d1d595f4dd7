"""Elementwise ops. Operands broadcast by name: the result has the union of operand names,
in the order the result type gives, and every shared name must have one size."""
from __future__ import annotations

import math

from ..diagnostics import VerifyError
from ..tensor_type import FLOAT_TYPES, INTEGER_TYPES, Dimension, TensorType
from .base import MOVE, MtfOp, mtf_op, names_text, same_element_type, same_sizes
from .base import producer, same_type_operand
from .creation import ConstantOp

NUMERIC = FLOAT_TYPES | INTEGER_TYPES
ALL_TYPES = NUMERIC | {"i1"}


def broadcast_by_name(types: list[TensorType]) -> tuple[Dimension, ...]:
    """The union of the names of `types` in order of first appearance (Mesh-TensorFlow's
    broadcast rule); VerifyError when a name has two sizes."""
    return tuple(Dimension(name, size) for name, size in _broadcast_sizes(types).items())


def _broadcast_sizes(types: list[TensorType]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for i, t in enumerate(types):
        for d in t.dims:
            if sizes.setdefault(d.name, d.size) != d.size:
                raise VerifyError(f"dimension '{d.name}' has size {sizes[d.name]} in one operand and {d.size} "
                                  f"in operand #{i}")
    return sizes


class ElementwiseOp(MtfOp):
    """Shared rules: result names = union of operand names, one size per name."""

    WORK = "result"
    MEMORY = "fused"

    #: Element types the operands may have.
    OPERAND_TYPES: frozenset[str] = frozenset(NUMERIC)
    #: The result's element type, or None when it equals the operands'.
    RESULT_ELEMENT: str | None = None
    #: Operand indices that must share the element type.
    SAME_ELEMENT_OPERANDS: tuple[int, ...] | None = None

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        """Operands broadcast by name; the element type is RESULT_ELEMENT or the last operand's."""
        return TensorType(broadcast_by_name(operand_types), cls.RESULT_ELEMENT or operand_types[-1].element_type)

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
        expected = set(_broadcast_sizes(types))
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


#: The elementwise ops whose result needs float32's range under a mixed-precision policy.
RANGE_OPS = frozenset({"exp", "log", "sqrt", "rsqrt", "pow"})


def _elementwise(name: str, arity: int, operand_types, result_element=None, doc="", linear=None):
    cls = type(
        name.title().replace("_", "") + "Op",
        (ElementwiseOp,),
        {
            "OPERATION_NAME": f"mtf.{name}",
            "OPERANDS": (arity, arity),
            "OPERAND_TYPES": frozenset(operand_types),
            "RESULT_ELEMENT": result_element,
            "LINEAR": linear or {},
            "PRECISION": "range" if name in RANGE_OPS else "follow",
            "__doc__": doc or f"`mtf.{name}`: elementwise {name}.",
        },
    )
    return mtf_op(cls)


def _sum(rule: str) -> dict[str, str]:
    return {"sum": rule}


#: Unary op name -> (element types it accepts, LINEAR: how a pending operand passes).
UNARY_OPS = {
    "neg": (NUMERIC, _sum("each")),
    "abs": (NUMERIC, None),
    "sign": (NUMERIC, None),
    "relu": (NUMERIC, None),
    "exp": (FLOAT_TYPES, None),
    "log": (FLOAT_TYPES, None),
    "sqrt": (FLOAT_TYPES, None),
    "rsqrt": (FLOAT_TYPES, None),
    "tanh": (FLOAT_TYPES, None),
    "logistic": (FLOAT_TYPES, None),
    "sin": (FLOAT_TYPES, None),
    "cos": (FLOAT_TYPES, None),
    "floor": (FLOAT_TYPES, None),
    "erf": (FLOAT_TYPES, None),
    "stop_gradient": (ALL_TYPES, MOVE),
    # An identity XLA may not look through: a rematerialized forward reads its inputs through
    # it, so that CSE cannot merge the recomputation back into the saved forward.
    "optimization_barrier": (ALL_TYPES, MOVE),
}
#: Binary op name -> (element types, LINEAR).
BINARY_OPS = {
    "add": (NUMERIC, _sum("summands")),  # pending + pending, or pending + scalar, stays pending
    "sub": (NUMERIC, _sum("summands")),
    "mul": (NUMERIC, _sum("one_factor")),
    "div": (NUMERIC, _sum("numerator")),
    "max": (ALL_TYPES, {"max": "alike"}),
    "min": (ALL_TYPES, {"min": "alike"}),
    "pow": (NUMERIC, None),
}
COMPARE_OPS = ("eq", "ne", "lt", "le", "gt", "ge")

if not RANGE_OPS <= UNARY_OPS.keys() | BINARY_OPS.keys():  # a misspelt name would silently not apply
    raise ValueError(f"RANGE_OPS names no elementwise op: {sorted(RANGE_OPS - UNARY_OPS.keys() - BINARY_OPS.keys())}")
UNARY_CLASSES = {n: _elementwise(n, 1, t, linear=linear) for n, (t, linear) in UNARY_OPS.items()}
BINARY_CLASSES = {n: _elementwise(n, 2, t, linear=linear) for n, (t, linear) in BINARY_OPS.items()}
COMPARE_CLASSES = {
    n: _elementwise(n, 2, ALL_TYPES, "i1", f"`mtf.{n}`: elementwise comparison, result i1.") for n in COMPARE_OPS
}


@mtf_op
class CastOp(ElementwiseOp):
    """`mtf.cast`: convert the element type (float->int truncates toward zero)."""

    OPERATION_NAME = "mtf.cast"
    OPERAND_TYPES = frozenset(ALL_TYPES)
    PRECISION = "declared"

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        if not src.same_shape(result) and set(src.names) != set(result.names):
            raise VerifyError(f"result names {names_text(result.names)} must equal operand names {names_text(src.names)}")
        same_sizes([src, result], "operand and result")

    def fold(self):
        """To the operand's own type (element type included): no conversion."""
        return same_type_operand(self)


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

    def fold(self):
        """Both branches one value, of the result's type: that value, whatever the condition."""
        if self.on_true == self.on_false:
            return same_type_operand(self, 1)
        return None


# -- folds (mtf-canonicalize), attached to the generated classes below ---------------------------
def _neutral_operand(op, sides, float_neutral: float, int_neutral: int):
    """The other operand when operand i (i in `sides`) is an `mtf.constant` splat of the
    neutral element, not pending, and the other operand has the result's full type.

    The float neutral element is matched with its sign: x + (-0.0) is x for every x (-0.0
    included), but x + 0.0 turns -0.0 into +0.0, so `add` folds -0.0 only."""
    for i in sides:
        other = same_type_operand(op, 1 - i)
        const = producer(op.operation.operands[i], ConstantOp) if other is not None else None
        if const is None or const.result_type.partial:
            continue
        value = const.splat_value()
        if value is None or isinstance(value, bool):
            continue
        if const.result_type.is_float:
            if value == float_neutral and math.copysign(1.0, value) == math.copysign(1.0, float_neutral):
                return other
        elif value == int_neutral:
            return other
    return None


def _fold_add(self):
    """x + (-0.0) and (-0.0) + x (integers: + 0): exact for every x, NaN, inf and -0.0 included."""
    return _neutral_operand(self, (0, 1), -0.0, 0)


def _fold_sub(self):
    """x - (+0.0) (integers: - 0): exact for every x (-0.0 - 0.0 is -0.0)."""
    return _neutral_operand(self, (1,), 0.0, 0)


def _fold_mul(self):
    """x * 1 and 1 * x: exact for every x."""
    return _neutral_operand(self, (0, 1), 1.0, 1)


def _fold_div(self):
    """x / 1: exact for every x (integers too)."""
    return _neutral_operand(self, (1,), 1.0, 1)


def _fold_pow(self):
    """x ** 1: exact for every x (IEEE pow(x, 1) is x, NaN included)."""
    return _neutral_operand(self, (1,), 1.0, 1)


def _fold_same_operands(self):
    """max(x, x) and min(x, x): x (NaN included), when the result has x's type."""
    return same_type_operand(self) if self.lhs == self.rhs else None


def _fold_neg(self):
    """-(-x): x, exact (integers wrap twice), when the result has x's type."""
    inner = producer(self.input, UNARY_CLASSES["neg"])
    if inner is None or inner.input.type != self.operation.results[0].type:
        return None
    return inner.input


#: Op class -> fold. Not folded on purpose: stop_gradient (an identity whose meaning is for
#: autodiff, which may run later), optimization_barrier (its meaning is for XLA), x * 0 (NaN, inf, -0.0), x + 0.0 (-0.0).
FOLDS = {
    BINARY_CLASSES["add"]: _fold_add,
    BINARY_CLASSES["sub"]: _fold_sub,
    BINARY_CLASSES["mul"]: _fold_mul,
    BINARY_CLASSES["div"]: _fold_div,
    BINARY_CLASSES["pow"]: _fold_pow,
    BINARY_CLASSES["max"]: _fold_same_operands,
    BINARY_CLASSES["min"]: _fold_same_operands,
    UNARY_CLASSES["neg"]: _fold_neg,
}
for _cls, _fold in FOLDS.items():
    _cls.fold = _fold
