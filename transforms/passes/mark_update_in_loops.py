"""`mtf-mark-update-in-loops`: weight-update sharding inside the loops that build a gradient.

A gradient that a scan stacks (a scanned layer's parameter) or carries (the sum over
microbatches) gets its `update` marker (`mi.train_step(shard_update=...)`) in the scan's
body too, where each iteration yields its slice or adds its part to the running sum: each
pending sum over the data axes is then reduce-scattered there, so neither the stacked
gradient nor the accumulator is ever whole.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.ops import BINARY_CLASSES, ScanOp

from ..infra.registry import ModulePass, register_pass
from .shard_update import insert_marker, marker_fields, parameter_markers

_ADD = BINARY_CLASSES["add"]


@register_pass
@dataclass
class MarkUpdateInLoopsPass(ModulePass):
    NAME = "mtf-mark-update-in-loops"
    SUMMARY = "Repeat a stacked or accumulated gradient's update marker inside the scan that builds it"

    def apply(self, module_op) -> None:
        pending = [op for op in parameter_markers(module_op) if marker_fields(op)[1] == "update"]
        while pending:
            marker = pending.pop()
            value = marker.operation.operands[0]
            scan = value.owner.opview if isinstance(value, ir.OpResult) else None
            if not isinstance(scan, ScanOp):
                continue
            k = value.result_number
            body = scan.body_block()
            yield_op = list(body.operations)[-1]
            if k < scan.carried:  # a running sum: mark what each iteration adds, not the carry
                reader, slot = _contribution(yield_op.operation.operands[k], body.arguments[1 + k])
            else:
                reader, slot = yield_op, k
            if reader is None:
                continue
            inner = insert_marker(reader.operation.operands[slot], marker_fields(marker)[0], "update", marker.location,
                                  ir.InsertionPoint(reader))
            reader.operation.operands[slot] = inner
            pending.append(inner.owner.opview)


def _contribution(yielded, carry):
    """(the add, operand index) of what an iteration adds to the running sum `carry`, when it
    yields `carry + contribution`; (None, None) for any other carry."""
    add = yielded.owner.opview if isinstance(yielded, ir.OpResult) else None
    if not isinstance(add, _ADD):
        return None, None
    operands = list(add.operation.operands)
    if carry not in operands:
        return None, None
    return add, 1 - operands.index(carry)
