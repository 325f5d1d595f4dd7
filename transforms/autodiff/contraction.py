"""VJPs of einsum and the reductions.

Named dims make the einsum VJP mechanical: the cotangent of operand i is the einsum of the
result's cotangent with every other operand, output = operand i's names. Names of operand i
that appear nowhere else (summed only over operand i) do not depend on it: the partial
einsum leaves them out and the cotangent is broadcast over them.

reduce_max / reduce_min follow JAX: the cotangent is split equally among the positions that
attain the extremum (`_reduce_chooser_jvp_rule`): mask = (x == y), ct_x = mask * ct / sum(mask).
"""
from __future__ import annotations

from meshir.dialect.ops import EinsumOp, ReduceMaxOp, ReduceMinOp, ReduceSumOp

from .emitter import type_of
from .rules import vjp


@vjp(EinsumOp)
def _einsum(em, op, ct, wanted):
    operands = list(op.operation.operands)
    ct = em.cast(ct, type_of(operands[0]).element_type)  # an einsum returning a wider float
    out = {}
    for i in sorted(wanted):
        others = [ct] + operands[:i] + operands[i + 1:]
        available = {n for v in others for n in type_of(v).names}
        target = type_of(operands[i])
        names = [n for n in target.names if n in available]
        out[i] = em.broadcast(em.einsum(others, names), target)
    return out


@vjp(ReduceSumOp)
def _reduce_sum(em, op, ct, wanted):
    return {0: em.broadcast(ct, type_of(op.input))}


def _reduce_chooser(em, op, ct, wanted):
    x, t = op.input, type_of(op.input)
    mask = em.cast(em.compare("eq", x, op.result), t.element_type)
    count = em.reduce_sum(mask, op.result_type.names)
    return {0: em.mul(mask, em.div(ct, count))}


vjp(ReduceMaxOp, ReduceMinOp)(_reduce_chooser)
