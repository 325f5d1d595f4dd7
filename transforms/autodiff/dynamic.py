"""VJPs of dynamic_slice and dynamic_update_slice (the start gets no gradient).

slice: the window's cotangent written into zeros of x's type at the same (clamped) start.
update: x's cotangent is the result's with the window zeroed (the update overwrote it); the
update's is the result's cotangent's window.
"""
from __future__ import annotations

from meshir.dialect.ops import DynamicSliceOp, DynamicUpdateSliceOp

from .emitter import type_of
from .rules import vjp


@vjp(DynamicSliceOp, operands=lambda op: (0,))
def _dynamic_slice(em, op, ct, wanted):
    x, start = op.operation.operands
    zeros = em.zeros(type_of(x))
    return {0: em.emit_inferred(DynamicUpdateSliceOp, [zeros, ct, start], {"dim": op.attr("dim")})}


@vjp(DynamicUpdateSliceOp, operands=lambda op: (0, 1))
def _dynamic_update_slice(em, op, ct, wanted):
    _, update, start = op.operation.operands
    dim, out = op.attr("dim"), {}
    if 0 in wanted:
        out[0] = em.emit_inferred(DynamicUpdateSliceOp, [ct, em.zeros(type_of(update)), start], {"dim": dim})
    if 1 in wanted:
        window = type_of(update).without_layout().with_element_type(type_of(ct).element_type)
        out[1] = em.emit(DynamicSliceOp, window, [ct, start], {"dim": dim})
    return out
