"""Make an explicit-mode module compilable for a one-device mesh.

With one partition XLA skips SPMD partitioning, and the custom calls Shardy leaves for an
`sdy.manual_computation` then have no implementation ("No registered implementation for
untyped custom call to xla.sdy.GlobalToLocalShape"). On one device local and global shapes
are the same, so the manual computation is replaced by its body — what jax emits for a
`shard_map` on one device.
"""
from __future__ import annotations

from meshir._jax_private import ir


def inline_manual_computations(module_op) -> None:
    """Replace every `sdy.manual_computation` under `module_op` by its body, in place."""
    found = []

    def collect(op):
        if op.name == "sdy.manual_computation":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module_op.operation.walk(collect)
    for manual in found:
        body = manual.regions[0].blocks[0]
        for argument, operand in zip(body.arguments, manual.operands):
            argument.replace_all_uses_with(operand)
        *ops, terminator = list(body.operations)
        for op in ops:
            op.move_before(manual)
        for result, value in zip(manual.results, terminator.operands):
            result.replace_all_uses_with(value)
        manual.erase()
