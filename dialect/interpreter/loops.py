"""The reference semantics of loops (dialect/ops/loops.py), by running their bodies."""
from __future__ import annotations

import numpy as np

from .errors import located_error

#: Iterations a `mtf.while` may run in the interpreter before it is taken for a hang.
MAX_WHILE_ITERATIONS = 1_000_000


def run_scan(op, operands, run_block) -> list[np.ndarray]:
    length, carries, dim = op.attr("length"), op.attr("carries"), op.attr("dim")
    carry, xs = list(operands[:carries]), operands[carries:carries + op.xs_count]
    invariants = list(operands[carries + op.xs_count:])
    axes = [op.operand_types[carries + j].index(dim) for j in range(len(xs))]
    block = op.body_block()
    stacked = None
    for i in range(length):
        slices = [np.take(x, i, axis=a) for x, a in zip(xs, axes)]
        out = run_block(block, [np.array(i, np.int32)] + carry + slices + invariants)
        carry, ys = out[:carries], out[carries:]
        if stacked is None:
            stacked = [[] for _ in ys]
        for acc, y in zip(stacked, ys):
            acc.append(np.asarray(y))
    return carry + [np.stack(acc) for acc in stacked or []]


def run_while(op, operands, run_block) -> list[np.ndarray]:
    carry, invariants = list(operands[:op.carried]), list(operands[op.carried:])
    for _ in range(MAX_WHILE_ITERATIONS):
        (go,) = run_block(op.body_block(0), carry + invariants)
        if not bool(go):
            return carry
        carry = run_block(op.body_block(1), carry + invariants)
    raise located_error(op.location, f"mtf.while ran {MAX_WHILE_ITERATIONS} iterations without its condition "
                                     "becoming false")


LOOPS = {"mtf.scan": run_scan, "mtf.while": run_while}
