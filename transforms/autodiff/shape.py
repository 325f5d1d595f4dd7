"""VJPs of the shape ops: each is linear, and its VJP is the "opposite" shape op.

broadcast -> reduce_sum over the added names; reshape -> reshape back; rename -> rename back;
transpose -> transpose back; slice -> pad with zeros; concat -> one slice per operand;
split -> concat of the pieces' cotangents (zeros for a piece nothing used);
pad -> slice out the interior; shift by k -> shift by -k (vacated places 0, or wrap).
"""
from __future__ import annotations

from meshir.dialect.ops import BroadcastOp, ConcatOp, PadOp, RenameOp, ReshapeOp, ShiftOp, SliceOp, SplitOp, TransposeOp

from .emitter import type_of
from .rules import vjp


@vjp(BroadcastOp, TransposeOp)
def _broadcast(em, op, ct, wanted):
    return {0: ct}  # Emitter.fit sums the added names and restores the operand's order


@vjp(ReshapeOp)
def _reshape(em, op, ct, wanted):
    return {0: em.reshape(ct, type_of(op.input))}


@vjp(RenameOp)
def _rename(em, op, ct, wanted):
    return {0: em.rename(ct, type_of(op.input))}


@vjp(SliceOp)
def _slice(em, op, ct, wanted):
    dim, start = op.attr("dim"), op.attr("start")
    size, length = type_of(op.input).size(dim), op.result_type.size(dim)
    return {0: em.pad(ct, dim, start, size - start - length)}


@vjp(ConcatOp)
def _concat(em, op, ct, wanted):
    dim = op.attr("dim")
    out, offset = {}, 0
    for i, t in enumerate(op.operand_types):
        if i in wanted:
            out[i] = em.slice(ct, dim, offset, t.size(dim))
        offset += t.size(dim)
    return out


@vjp(SplitOp)
def _split(em, op, ct, wanted):
    pieces = ct if isinstance(ct, list) else [ct]  # one cotangent per piece
    return {0: em.emit_inferred(ConcatOp, pieces, {"dim": op.attr("dim")})}


@vjp(PadOp)
def _pad(em, op, ct, wanted):
    dim = op.attr("dim")
    return {0: em.slice(ct, dim, op.attr("low"), type_of(op.input).size(dim))}


@vjp(ShiftOp)
def _shift(em, op, ct, wanted):
    return {0: em.shift(ct, op.attr("dim"), -op.attr("offset"), op.attr("wrap"))}
