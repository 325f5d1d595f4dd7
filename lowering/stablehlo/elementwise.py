"""Elementwise ops, select and cast: the same op on local shards, operands broadcast by name
to the result's local shape. bf16/f16 arithmetic runs in f32 and is rounded once, as the
reference interpreter does it."""
from __future__ import annotations

import numpy as np

from meshir.dialect.ops.elementwise import BINARY_OPS, COMPARE_OPS

from . import builder as hlo
from .context import FunctionLowering
from .types import Local, compute_element, is_float

UNARY = {
    "neg": "negate", "abs": "abs", "sign": "sign", "exp": "exponential", "log": "log",
    "sqrt": "sqrt", "rsqrt": "rsqrt", "tanh": "tanh", "logistic": "logistic",
    "sin": "sine", "cos": "cosine", "floor": "floor", "erf": "chlo.erf",
}
BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
          "max": "maximum", "min": "minimum", "pow": "power"}


def aligned_operands(p: FunctionLowering, op, widen: bool = True) -> list[Local]:
    """The operands broadcast by name to the result's local shape (in f32 if narrow floats)."""
    result = op.result_type
    shape = p.shape(result)
    out = []
    for v, t in zip(p.operands(op), op.operand_types):
        v = hlo.align(p.b, v, t.names, result.names, shape)
        out.append(hlo.convert(p.b, v, compute_element(v.elem)) if widen else v)
    return out


def _unary(name: str):
    def rule(p: FunctionLowering, op) -> Local:
        (x,) = aligned_operands(p, op)
        return hlo.convert(p.b, hlo.unary(p.b, UNARY[name], x), op.result_type.element_type)

    return rule


def _binary(name: str):
    def rule(p: FunctionLowering, op) -> Local:
        x, y = aligned_operands(p, op)
        return hlo.convert(p.b, hlo.binary(p.b, BINARY[name], x, y), op.result_type.element_type)

    return rule


def _compare(direction: str):
    def rule(p: FunctionLowering, op) -> Local:
        x, y = aligned_operands(p, op)
        return hlo.compare(p.b, direction, x, y)

    return rule


def relu(p: FunctionLowering, op) -> Local:
    (x,) = aligned_operands(p, op)
    return hlo.convert(p.b, hlo.binary(p.b, "maximum", x, hlo.splat_like(p.b, 0, x)), op.result_type.element_type)


def stop_gradient(p: FunctionLowering, op) -> Local:
    return aligned_operands(p, op, widen=False)[0]


def optimization_barrier(p: FunctionLowering, op) -> Local:
    """`stablehlo.optimization_barrier`: an identity XLA does not look through (XLA:CPU
    expands it before its CSE; docs/decisions.md, "Calls", says what else remat relies on)."""
    (x,) = aligned_operands(p, op, widen=False)
    return p.b.op("optimization_barrier", [x], x.shape, x.elem)


def select(p: FunctionLowering, op) -> Local:
    cond, on_true, on_false = aligned_operands(p, op, widen=False)
    return hlo.select(p.b, cond, on_true, on_false)


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


RULES = {f"mtf.{n}": _unary(n) for n in UNARY}
RULES.update({f"mtf.{n}": _binary(n) for n in BINARY_OPS})
RULES.update({f"mtf.{n}": _compare(n) for n in COMPARE_OPS})
RULES.update({"mtf.relu": relu, "mtf.stop_gradient": stop_gradient, "mtf.optimization_barrier": optimization_barrier,
              "mtf.select": select, "mtf.cast": cast})
