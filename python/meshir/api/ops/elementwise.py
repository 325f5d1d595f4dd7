"""Elementwise ops. Operands broadcast by name: the result has the first operand's dims
followed by the other operands' new dims (Mesh-TensorFlow's rule). Python numbers become
scalar constants of the other operand's element type."""
from __future__ import annotations

import numbers

from meshir.dialect import TensorType, VerifyError
from meshir.dialect.ops.elementwise import broadcast_by_name
from meshir.dialect.tensor_type import Dimension
from meshir.dialect.ops import BINARY_CLASSES, COMPARE_CLASSES, UNARY_CLASSES, CastOp, SelectOp
from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.op_registry import INTERNAL, register

from meshir.api import _checks as checks

#: The public functions (mi.add, ...); meshir.api re-exports exactly these.
__all__ = [
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "logistic", "sigmoid", "sin", "cos", "sign", "floor", "erf",
    "relu", "stop_gradient", "add", "sub", "mul", "div", "maximum", "minimum", "pow", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "cast", "select", "where",
]
from meshir.api.ops._builder import build, builds, located_error
from meshir.api.programs.program import program_of
from meshir.api.programs.tensor import Tensor
from meshir.api.ops.creation import constant


def broadcast_dims(op_name: str, types: list[TensorType]) -> tuple[Dimension, ...]:
    """The dialect's broadcast by name; a located MeshIRValueError naming the op when a name
    has two sizes."""
    try:
        return broadcast_by_name(types)
    except VerifyError as e:
        raise located_error(f"'{op_name}': {e}", MeshIRValueError) from None


def as_tensors(operands, like_dtype: str | None = None) -> list[Tensor]:
    """Turn Python numbers among the operands into scalar constants."""
    tensors = [o for o in operands if isinstance(o, Tensor)]
    if not tensors:
        raise located_error(f"expected at least one MeshIR Tensor among the operands, got "
                            f"{', '.join(checks.describe(o) for o in operands)}", MeshIRTypeError)
    dtype = like_dtype or tensors[0].dtype
    prog = program_of(tensors)
    out = []
    for o in operands:
        if isinstance(o, Tensor):
            out.append(o)
        elif isinstance(o, (numbers.Number,)) and not isinstance(o, complex):
            out.append(constant(o, [], dtype=dtype, program=prog))
        else:
            raise located_error(f"cannot use {checks.describe(o)} as a MeshIR operand (a Tensor or a real number)",
                                MeshIRTypeError)
    return out


def _elementwise(op_class, operands) -> Tensor:
    broadcast_dims(op_class.OPERATION_NAME, [t.type for t in operands])  # the user's error first
    return build(op_class, None, operands)


def _unary(name: str):
    def op(x: Tensor) -> Tensor:
        return _elementwise(UNARY_CLASSES[name], as_tensors([x]))

    op.__name__ = name
    op.__doc__ = f"Elementwise `mtf.{name}`."
    return builds(UNARY_CLASSES[name])(op)


def _binary(name: str, public: str):
    def op(x, y) -> Tensor:
        return _elementwise(BINARY_CLASSES[name], as_tensors([x, y]))

    op.__name__ = public
    op.__doc__ = f"Elementwise `mtf.{name}`, broadcasting by name."
    return builds(BINARY_CLASSES[name])(op)


def _compare(name: str, public: str):
    def op(x, y) -> Tensor:
        return _elementwise(COMPARE_CLASSES[name], as_tensors([x, y]))

    op.__name__ = public
    op.__doc__ = f"Elementwise comparison `mtf.{name}` (result i1), broadcasting by name."
    return builds(COMPARE_CLASSES[name])(op)


neg, abs, exp, log, sqrt, rsqrt = (_unary(n) for n in ("neg", "abs", "exp", "log", "sqrt", "rsqrt"))
tanh, logistic, sin, cos, sign, floor = (_unary(n) for n in ("tanh", "logistic", "sin", "cos", "sign", "floor"))
relu, stop_gradient, erf = _unary("relu"), _unary("stop_gradient"), _unary("erf")
sigmoid = logistic

add, sub, mul, div = (_binary(n, n) for n in ("add", "sub", "mul", "div"))
maximum, minimum, pow = _binary("max", "maximum"), _binary("min", "minimum"), _binary("pow", "pow")

equal, not_equal = _compare("eq", "equal"), _compare("ne", "not_equal")
less, less_equal = _compare("lt", "less"), _compare("le", "less_equal")
greater, greater_equal = _compare("gt", "greater"), _compare("ge", "greater_equal")


@builds(CastOp)
def cast(x: Tensor, dtype: str) -> Tensor:
    """Convert to element type `dtype` (f32, bf16, f16, f64, i32, i64, i1, or NumPy's names)."""
    checks.tensor(x, "the operand of mi.cast")
    dtype = checks.element_type(dtype, "'mtf.cast'")
    return build(CastOp, x.type.without_layout().with_element_type(dtype), [x])


@builds(SelectOp)
def select(condition: Tensor, on_true, on_false) -> Tensor:
    """`on_true` where `condition` (i1) holds, else `on_false`, broadcasting by name."""
    checks.tensor(condition, "the condition of mi.select")
    like = next((o.dtype for o in (on_true, on_false) if isinstance(o, Tensor)), None)
    if like is None:
        raise located_error(f"'mtf.select': on_true or on_false must be a Tensor, got {checks.describe(on_true)} "
                            f"and {checks.describe(on_false)}", MeshIRTypeError)
    return _elementwise(SelectOp, [condition] + as_tensors([on_true, on_false], like))


where = select
# mtf-autodiff reads a rematerialized forward's inputs through barriers (mi.remat).
register("build", UNARY_CLASSES["optimization_barrier"], INTERNAL)
