"""Fresh randomness every training step: the loss program's seed arguments, and the seed of
each step derived from a base seed and the step.

A loss program draws new random values for each value of a 0-d int32 argument that reaches a
random op's seed operand (`mi.dropout(x, rate, seed)` with `seed = prog.argument("seed", [],
"i32")`). `mi.train_step` keeps that argument, under its name, as the run's *base* seed and
gives the loss `fold_in(base, step - 1)`: every step draws anew, and a run resumed at step t
with the same base continues the same sequence. Under microbatches each slice folds in its
index as well, so no two slices share a mask.
"""
from __future__ import annotations

from meshir.dialect.ops import RandomNormalOp, RandomUniformOp
from meshir.dialect.signature import signature
from meshir.dialect.walk import ops_within

from meshir.api.ops.composites import fold_in
from meshir.api.ops.elementwise import cast

RANDOM_OPS = (RandomUniformOp, RandomNormalOp)


def seed_arguments(fn) -> tuple[str, ...]:
    """Names of the 0-d i32 arguments of `fn` from which a random op's seed is computed
    (through any ops, loop operands and loop bodies: a conservative forward walk)."""
    sig = signature(fn)
    body = fn.regions[0].blocks[0]
    candidates = [(value, name) for value, name, t in zip(body.arguments, sig.arg_names, sig.arg_types)
                  if not t.dims and t.element_type == "i32"]
    if not candidates:
        return ()
    ops = list(ops_within(body))
    return tuple(name for value, name in candidates if _reaches_a_seed(value, ops))


def _reaches_a_seed(start, ops) -> bool:
    """Whether `start` flows into a random op's seed (MLIR values hash by identity). One pass
    suffices: `ops_within` visits a block's ops in order and every nested block after all the
    ops of its parent block, so each op comes after the definitions of the values it reads."""
    reached = {start}
    for op in ops:
        if not any(v in reached for v in op.operation.operands):
            continue
        if isinstance(op, RANDOM_OPS) and op.seed_operand() in reached:
            return True
        reached.update(op.operation.results)
        for region in op.operation.regions:  # a loop: its body sees the value
            for block in region.blocks:
                reached.update(block.arguments)
    return False


def step_seed(base, step):
    """The seed of step `step` (an f32 Tensor, 1-based) from the base seed Tensor."""
    return fold_in(base, cast(step - 1.0, "i32"))
