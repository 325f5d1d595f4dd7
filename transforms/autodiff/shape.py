"""VJPs of the shape ops: each is linear, and its VJP is the "opposite" shape op.

broadcast -> reduce_sum over the added names; reshape -> reshape back; rename -> rename back;
transpose -> transpose back; slice -> pad with zeros; concat -> one slice per operand;
pad -> slice out the interior; shift by k -> shift by -k (vacated places 0, or wrap).
"""
from __future__ import annotations

from .emitter import type_of
from .rules import vjp


@vjp("mtf.broadcast", "mtf.transpose")
def _broadcast(em, op, ct, wanted):
    return {0: ct}  # Emitter.fit sums the added names and restores the operand's order


@vjp("mtf.reshape")
def _reshape(em, op, ct, wanted):
    return {0: em.reshape(ct, type_of(op.input))}


@vjp("mtf.rename")
def _rename(em, op, ct, wanted):
    return {0: em.rename(ct, type_of(op.input))}


@vjp("mtf.slice")
def _slice(em, op, ct, wanted):
    dim, start = op.attr("dim"), op.attr("start")
    size, length = type_of(op.input).size(dim), op.result_type.size(dim)
    return {0: em.pad(ct, dim, start, size - start - length)}


@vjp("mtf.concat")
def _concat(em, op, ct, wanted):
    dim = op.attr("dim")
    out, offset = {}, 0
    for i, t in enumerate(op.operand_types):
        if i in wanted:
            out[i] = em.slice(ct, dim, offset, t.size(dim))
        offset += t.size(dim)
    return out


@vjp("mtf.pad")
def _pad(em, op, ct, wanted):
    dim = op.attr("dim")
    return {0: em.slice(ct, dim, op.attr("low"), type_of(op.input).size(dim))}


@vjp("mtf.shift")
def _shift(em, op, ct, wanted):
    return {0: em.shift(ct, op.attr("dim"), -op.attr("offset"), op.attr("wrap"))}
