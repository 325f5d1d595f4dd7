"""The reference semantics of loops (dialect/ops/loops.py), by running their bodies.

A body is run by the driver's run_block, which returns the operands of its `mtf.yield`.
"""
from __future__ import annotations

import numpy as np

from ..diagnostics import located_error
from ..op_registry import rule
from ..ops.loops import ScanOp, WhileOp
from .dispatch import rule_output
from .evaluator import run_block

#: Iterations a `mtf.while` may run in the interpreter before it is taken for a hang.
MAX_WHILE_ITERATIONS = 1_000_000


@rule("interpret", ScanOp)
def run_scan(op, operands):
    length, carries, dim = op.attr("length"), op.attr("carries"), op.attr("dim")
    carry, xs = list(operands[:carries]), operands[carries:carries + op.xs_count]
    invariants = list(operands[carries + op.xs_count:])
    axes = [op.operand_types[carries + j].index(dim) for j in range(len(xs))]
    block = op.body_block()
    stacked: dict[int, list] = {}
    for i in (reversed(range(length)) if op.attr("reverse") else range(length)):
        slices = [np.take(x, i, axis=a) for x, a in zip(xs, axes)]
        out = run_block(block, [np.array(i, np.int32)] + carry + slices + invariants)
        carry, stacked[i] = out[:carries], [np.asarray(y) for y in out[carries:]]
    return rule_output(op, carry + [np.stack(ys) for ys in zip(*(stacked[i] for i in range(length)))])


@rule("interpret", WhileOp)
def run_while(op, operands):
    carry, invariants = list(operands[:op.carried]), list(operands[op.carried:])
    for _ in range(MAX_WHILE_ITERATIONS):
        (go,) = run_block(op.body_block(0), carry + invariants)
        if not bool(go):
            return rule_output(op, carry)
        carry = run_block(op.body_block(1), carry + invariants)
    raise located_error(op.location, f"{WhileOp.OPERATION_NAME} ran {MAX_WHILE_ITERATIONS} iterations without its "
                                     "condition becoming false")
