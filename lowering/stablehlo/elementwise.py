"""Elementwise ops, select and cast: the same op on local shards, operands broadcast by name
to the result's local shape. bf16/f16 arithmetic runs in f32 and is rounded once, as the
reference interpreter does it."""
from __future__ import annotations

import numpy as np

from meshir.dialect.op_registry import register, rule
from meshir.dialect.ops import BINARY_CLASSES, COMPARE_CLASSES, UNARY_CLASSES, CastOp, SelectOp

from . import builder as hlo
from .context import FunctionLowering
from .types import Local, compute_element, is_float

#: The StableHLO op of each unary op that is one StableHLO op, by class: a name the dialect
#: lacks fails at import, an op left out has no "lower" rule (the registry's completeness test).
UNARY = {UNARY_CLASSES[n]: hlo_name for n, hlo_name in {
    "neg": "negate", "abs": "abs", "sign": "sign", "exp": "exponential", "log": "log",
    "sqrt": "sqrt", "rsqrt": "rsqrt", "tanh": "tanh", "logistic": "logistic",
    "sin": "sine", "cos": "cosine", "floor": "floor", "erf": "chlo.erf",
}.items()}
#: The StableHLO op of each binary op, by class likewise.
BINARY = {BINARY_CLASSES[n]: hlo_name for n, hlo_name in {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
    "max": "maximum", "min": "minimum", "pow": "power",
}.items()}


def aligned_operands(p: FunctionLowering, op, widen: bool = True) -> list[Local]:
    """The operands broadcast by name to the result's local shape (in f32 if narrow floats)."""
    result = op.result_type
    shape = p.shape(result)
    out = []
    for v, t in zip(p.operands(op), op.operand_types):
        v = hlo.align(p.b, v, t.names, result.names, shape)
        out.append(hlo.convert(p.b, v, compute_element(v.elem)) if widen else v)
    return out


def _unary(hlo_name: str):
    def unary(p: FunctionLowering, op) -> Local:
        (x,) = aligned_operands(p, op)
        return hlo.convert(p.b, hlo.unary(p.b, hlo_name, x), op.result_type.element_type)

    return unary


def _binary(hlo_name: str):
    def binary(p: FunctionLowering, op) -> Local:
        x, y = aligned_operands(p, op)
        return hlo.convert(p.b, hlo.binary(p.b, hlo_name, x, y), op.result_type.element_type)

    return binary


def _compare(direction: str):
    def compare(p: FunctionLowering, op) -> Local:
        x, y = aligned_operands(p, op)
        return hlo.compare(p.b, direction, x, y)

    return compare


for _cls, _name in UNARY.items():
    register("lower", _cls, _unary(_name))
for _cls, _name in BINARY.items():
    register("lower", _cls, _binary(_name))
for _direction, _cls in COMPARE_CLASSES.items():
    register("lower", _cls, _compare(_direction))


@rule("lower", UNARY_CLASSES["relu"])
def relu(p: FunctionLowering, op) -> Local:
    (x,) = aligned_operands(p, op)
    return hlo.convert(p.b, hlo.binary(p.b, "maximum", x, hlo.splat_like(p.b, 0, x)), op.result_type.element_type)


@rule("lower", UNARY_CLASSES["stop_gradient"])
def stop_gradient(p: FunctionLowering, op) -> Local:
    return aligned_operands(p, op, widen=False)[0]


@rule("lower", UNARY_CLASSES["optimization_barrier"])
def optimization_barrier(p: FunctionLowering, op) -> Local:
    """`stablehlo.optimization_barrier`: an identity XLA does not look through (XLA:CPU
    expands it before its CSE; docs/decisions.md, "Calls", says what else remat relies on)."""
    (x,) = aligned_operands(p, op, widen=False)
    return p.b.op("optimization_barrier", [x], x.shape, x.elem)


@rule("lower", SelectOp)
def select(p: FunctionLowering, op) -> Local:
    cond, on_true, on_false = aligned_operands(p, op, widen=False)
    return hlo.select(p.b, cond, on_true, on_false)


@rule("lower", CastOp)
def cast(p: FunctionLowering, op) -> Local:
    """Convert the element type. To i1: `x != 0`. Float to integer: truncate toward zero,
    NaN to 0, saturate out-of-range values (the interpreter's rule, made explicit so that
    it does not depend on the backend's conversion of out-of-range floats)."""
    (x,) = aligned_operands(p, op)
    target = op.result_type.element_type
    b = p.b
    if target == "i1":
        return hlo.compare(b, "ne", x, hlo.splat_like(b, 0, x))
    if not (is_float(x.elem) and not is_float(target)):
        return hlo.convert(b, x, target)
    info = np.iinfo(op.result_type.dtype)
    limit = 2.0 ** (info.bits - 1)
    high = hlo.compare(b, "ge", x, hlo.splat_like(b, limit, x))
    low = hlo.compare(b, "lt", x, hlo.splat_like(b, -limit, x))
    inside = hlo.select(b, hlo.compare(b, "eq", x, x), x, hlo.splat_like(b, 0, x))  # NaN -> 0
    inside = hlo.select(b, hlo.binary(b, "or", high, low), hlo.splat_like(b, 0, x), inside)
    y = hlo.convert(b, inside, target)
    y = hlo.select(b, high, hlo.splat_like(b, info.max, y), y)
    return hlo.select(b, low, hlo.splat_like(b, info.min, y), y)
