"""VJPs of cumsum and cumprod.

cumsum is linear: its cotangent is the cumsum of the result's cotangent the other way
(`reverse` flipped, `exclusive` kept).

cumprod without dividing by x (exact where x holds zeros, as jax's): for a forward scan,
ct_x[j] = E[j] * R[j], where E is the exclusive cumprod of x (the product before j) and R
solves R[j] = a[j] + x[j+1] * R[j+1] from the end, with a = ct (a[j] = ct[j+1] when
exclusive). That affine recurrence is solved in ceil(log2 n) doubling steps of shifts and
products (Hillis and Steele's scan on the pairs (a, b) = (a, x shifted)); a reversed scan
runs the same the other way. Along a split dim each shift is a halo exchange while it fits
a block, a gather after.
"""
from __future__ import annotations

from meshir.dialect.ops import CumprodOp, CumsumOp

from .emitter import type_of
from .rules import vjp


@vjp(CumsumOp)
def _cumsum(em, op, ct, wanted):
    attrs = {"dim": op.attr("dim"), "exclusive": op.attr("exclusive"), "reverse": not op.attr("reverse")}
    return {0: em.emit_inferred(CumsumOp, [ct], attrs)}


@vjp(CumprodOp)
def _cumprod(em, op, ct, wanted):
    x = op.operation.operands[0]
    dim, reverse = op.attr("dim"), op.attr("reverse")
    toward = 1 if reverse else -1  # shift(v, toward)[j] = v at the next position the scan reaches
    a = em.shift(ct, dim, toward, False) if op.attr("exclusive") else ct
    b = em.shift(x, dim, toward, False, 1.0)
    n, d = type_of(x).size(dim), 1
    while d < n:
        a = em.add(a, em.mul(b, em.shift(a, dim, toward * d, False)))
        b = em.mul(b, em.shift(b, dim, toward * d, False, 1.0))
        d *= 2
    before = em.emit_inferred(CumprodOp, [x], {"dim": dim, "exclusive": True, "reverse": reverse})
    return {0: em.mul(before, a)}
