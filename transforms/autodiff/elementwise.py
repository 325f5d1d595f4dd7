"""VJPs of the elementwise ops, broadcasting by name.

Choices at non-differentiable points follow JAX (checked on jax 0.10.2):
- abs'(0) = 1 (`select(x >= 0, ct, -ct)`, jax's `_abs_jvp_rule`);
- relu'(0) = 0 (`x > 0`, as `jax.nn.relu`);
- max/min at a tie give each operand half the cotangent (jax's `_balanced_eq`);
- sign, floor and stop_gradient have zero VJPs; comparisons have none (i1 results);
- pow: d/da = b * a^(b-1), d/db = log(a) * a^b with log(0) taken as 0 (jax's `_replace_zero`),
  so 0^b has a zero b-gradient and a negative base a NaN one;
- sqrt'(0) = inf, log'(0) = inf: the IEEE values, as in JAX.
"""
from __future__ import annotations

import math

from meshir.dialect.ops import BINARY_CLASSES, COMPARE_CLASSES, UNARY_CLASSES, CastOp, SelectOp

from .emitter import type_of
from .rules import no_gradient, vjp

no_gradient(*(UNARY_CLASSES[name] for name in ("sign", "floor", "stop_gradient")), *COMPARE_CLASSES.values())


@vjp(UNARY_CLASSES["optimization_barrier"])
def _barrier(em, op, ct, wanted):
    return {0: ct}


@vjp(UNARY_CLASSES["neg"])
def _neg(em, op, ct, wanted):
    return {0: em.neg(ct)}


@vjp(UNARY_CLASSES["abs"])
def _abs(em, op, ct, wanted):
    return {0: em.select(em.compare("ge", op.input, 0.0), ct, em.neg(ct))}


@vjp(UNARY_CLASSES["relu"])
def _relu(em, op, ct, wanted):
    return {0: em.select(em.compare("gt", op.input, 0.0), ct, 0.0)}


@vjp(UNARY_CLASSES["exp"])
def _exp(em, op, ct, wanted):
    return {0: em.mul(ct, op.result)}


@vjp(UNARY_CLASSES["log"])
def _log(em, op, ct, wanted):
    return {0: em.div(ct, op.input)}


@vjp(UNARY_CLASSES["sqrt"])
def _sqrt(em, op, ct, wanted):
    return {0: em.mul(ct, em.div(0.5, op.result))}


@vjp(UNARY_CLASSES["rsqrt"])
def _rsqrt(em, op, ct, wanted):
    # d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 * rsqrt(x) / x
    return {0: em.mul(ct, em.mul(-0.5, em.div(op.result, op.input)))}


@vjp(UNARY_CLASSES["tanh"])
def _tanh(em, op, ct, wanted):
    y = op.result
    return {0: em.mul(ct, em.sub(1.0, em.mul(y, y)))}


@vjp(UNARY_CLASSES["logistic"])
def _logistic(em, op, ct, wanted):
    y = op.result
    return {0: em.mul(ct, em.mul(y, em.sub(1.0, y)))}


@vjp(UNARY_CLASSES["erf"])
def _erf(em, op, ct, wanted):
    # d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
    x = op.input
    return {0: em.mul(ct, em.mul(2 / math.sqrt(math.pi), em.unary("exp", em.neg(em.mul(x, x)))))}


@vjp(UNARY_CLASSES["sin"])
def _sin(em, op, ct, wanted):
    return {0: em.mul(ct, em.unary("cos", op.input))}


@vjp(UNARY_CLASSES["cos"])
def _cos(em, op, ct, wanted):
    return {0: em.neg(em.mul(ct, em.unary("sin", op.input)))}


def _float_to_float(op):
    """A cast carries a gradient only from a float to a float (int/i1 values have none)."""
    return (0,) if type_of(op.input).is_float and op.result_type.is_float else ()


@vjp(CastOp, operands=_float_to_float)
def _cast(em, op, ct, wanted):
    return {0: em.cast(ct, type_of(op.input).element_type)}


@vjp(BINARY_CLASSES["add"])
def _add(em, op, ct, wanted):
    return {0: ct, 1: ct}


@vjp(BINARY_CLASSES["sub"])
def _sub(em, op, ct, wanted):
    return {0: ct, 1: em.neg(ct) if 1 in wanted else None}


@vjp(BINARY_CLASSES["mul"])
def _mul(em, op, ct, wanted):
    a, b = op.operation.operands
    out = {}
    if 0 in wanted:
        out[0] = em.mul(ct, b)
    if 1 in wanted:
        out[1] = em.mul(ct, a)
    return out


@vjp(BINARY_CLASSES["div"])
def _div(em, op, ct, wanted):
    a, b = op.operation.operands
    scaled = em.div(ct, b)  # ct/b: a's cotangent, and a factor of b's
    out = {}
    if 0 in wanted:
        out[0] = scaled
    if 1 in wanted:  # d(a/b)/db = -a/b^2 = -(ct/b)(a/b): one division, none of the result
        out[1] = em.neg(em.mul(scaled, op.result))
    return out


def _chooser(em, op, ct, wanted):
    """max/min: the cotangent goes to the operand that equals the result; half to each at a tie."""
    a, b = op.operation.operands
    y = op.result
    at_a, at_b = em.compare("eq", a, y), em.compare("eq", b, y)
    elem = type_of(y).element_type
    half, one = em.scalar(0.5, elem), em.scalar(1.0, elem)
    out = {}
    if 0 in wanted:
        out[0] = em.mul(ct, em.select(at_a, em.select(at_b, half, one), 0.0))
    if 1 in wanted:
        out[1] = em.mul(ct, em.select(at_b, em.select(at_a, half, one), 0.0))
    return out


vjp(BINARY_CLASSES["max"], BINARY_CLASSES["min"])(_chooser)


@vjp(BINARY_CLASSES["pow"])
def _pow(em, op, ct, wanted):
    a, b = op.operation.operands
    out = {}
    if 0 in wanted:
        out[0] = em.mul(ct, em.mul(b, em.binary("pow", a, em.sub(b, 1.0))))
    if 1 in wanted:
        safe = em.select(em.compare("eq", a, 0.0), 1.0, a)
        out[1] = em.mul(ct, em.mul(em.unary("log", safe), op.result))
    return out


@vjp(SelectOp, operands=lambda op: (1, 2))
def _select(em, op, ct, wanted):
    cond = op.operation.operands[0]
    out = {}
    if 1 in wanted:
        out[1] = em.select(cond, ct, 0.0)
    if 2 in wanted:
        out[2] = em.select(cond, 0.0, ct)
    return out
