"""The rules of a loop (dialect/ops/loops.py): one layout per carried value, to a fixed point.

A carried value is one (value, dim) factor per dim linking the loop's operand, the body's
block argument (of every region), what the body yields for it and the loop's result, so the
solver gives them one layout whichever of them a statement reaches first. That layout is
the block argument's (the *anchor*, each factor's first member): the operand is resharded to
it before the loop, the yielded value before the `mtf.yield` (inside the body, so once per
iteration: a body that computes its next carry in another layout pays that reshard every
iteration), the result after the loop where it keeps another written layout. A scan's x
slice anchors its xs, whose scanned dim is replicated (each iteration reads one index); a
stacked y anchors its result the same way, the stacked dim replicated. An invariant is
anchored on its block arguments like a carry; where every use in the body reshards it to
one layout, that reshard moves before the loop (`hoist_invariant_reshards`: once, not in
every iteration). One rule per carried value: two carried values may use one mesh axis (the
one-axis-per-op rule is about the dims of one value).
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.ops import LoopOp, ScanOp, ShardOp
from meshir.dialect.walk import ops_within

from .rule import Member, OpRule
from .program_values import FunctionValues


def loop_rules(op, values: FunctionValues) -> list[OpRule]:
    if isinstance(op, ScanOp):
        return _scan_rules(op, values)
    return _while_rules(op, values)


def _ids(values: FunctionValues, vs) -> list[int]:
    return [values.id_of(v) for v in vs]


def _factors(values: FunctionValues, anchor: int, others: list[int], skip: str | None = None) -> list[list[Member]]:
    """One factor per dim of `anchor`, its other members the same dim of `others`."""
    return [[(anchor, d)] + [(o, d) for o in others] for d in values.values[anchor].type.names if d != skip]


def _scan_rules(op, values: FunctionValues) -> list[OpRule]:
    carries, xs, invariants = op.carried, op.xs_count, op.invariant_count
    operands = _ids(values, op.operation.operands)
    results = _ids(values, op.operation.results)
    args = _ids(values, op.body_block().arguments)[1:]  # after the index
    yields_op = list(op.body_block().operations)[-1]
    yielded = _ids(values, yields_op.operation.operands)
    dim = op.attr("dim")
    rules = []
    for k in range(carries):
        rules += _carry(op, yields_op, values, args[k], operands[k], k, results[k], yielded[k], k)
    for j in range(xs):
        x, arg = operands[carries + j], args[carries + j]
        rules.append(OpRule(op, [x], [], _factors(values, arg, [x]), positions=[carries + j], carried=True,
                            replicated=[(x, dim)]))
    for j in range(len(results) - carries):
        y, stacked = yielded[carries + j], results[carries + j]
        rules.append(OpRule(op, [], [stacked], _factors(values, y, [stacked]), carried=True,
                            replicated=[(stacked, dim)]))
    for m in range(invariants):
        position = carries + xs + m
        inv, arg = operands[position], args[carries + xs + m]
        rules.append(OpRule(op, [inv], [], _factors(values, arg, [inv]), positions=[position], carried=True))
    return rules


def _while_rules(op, values: FunctionValues) -> list[OpRule]:
    operands = _ids(values, op.operation.operands)
    results = _ids(values, op.operation.results)
    cond_args = _ids(values, op.body_block(0).arguments)
    args = _ids(values, op.body_block(1).arguments)
    yields_op = list(op.body_block(1).operations)[-1]
    yielded = _ids(values, yields_op.operation.operands)
    rules = []
    for k in range(op.carried):
        rules += _carry(op, yields_op, values, args[k], operands[k], k, results[k], yielded[k], k, [cond_args[k]])
    for m in range(op.invariant_count):
        position = op.carried + m
        inv = operands[position]
        rules.append(OpRule(op, [inv], [], _factors(values, args[position], [cond_args[position], inv]),
                            positions=[position], carried=True))
    return rules


def _carry(op, yields_op, values, arg: int, operand: int, position: int, result: int, yielded: int,
           yield_position: int, also: list[int] = ()) -> list[OpRule]:
    """A carried value's two rules: the loop's (operand, result) and the yield's."""
    linked = list(also) + [operand, result, yielded]
    return [
        OpRule(op, [operand], [result], _factors(values, arg, linked), positions=[position], carried=True),
        OpRule(yields_op, [yielded], [], _factors(values, arg, [yielded]), positions=[yield_position], carried=True),
    ]


def hoist_invariant_reshards(fn) -> int:
    """An invariant that every use in the loop's body reshards to one layout is resharded
    once, before the loop, instead of in every iteration (inner loops first, so a reshard
    hoisted out of an inner loop may leave the outer one too). Returns how many moved."""
    moved = 0
    for op in reversed([op for op in ops_within(fn.regions[0].blocks[0]) if isinstance(op, LoopOp)]):
        blocks = [region.blocks[0] for region in op.operation.regions]
        n, operands = op.invariant_count, op.operation.operands
        for m in range(n):
            args = [block.arguments[len(list(block.arguments)) - n + m] for block in blocks]
            shards = [use.owner for arg in args for use in arg.uses]
            if not shards or not all(_is_reshard(s) for s in shards):
                continue
            targets = {s.results[0].type for s in shards}
            if len(targets) != 1:
                continue
            target = targets.pop()
            position = len(operands) - n + m
            hoisted = ShardOp(target, [operands[position]], {"reshard": ir.BoolAttr.get(True)}, loc=shards[0].location,
                              ip=ir.InsertionPoint(op))
            op.operation.operands[position] = hoisted.result
            for arg in args:
                arg.set_type(target)
            for s in shards:
                s.results[0].replace_all_uses_with(s.operands[0])
                s.erase()
            moved += 1
    return moved


def _is_reshard(operation) -> bool:
    attrs = operation.attributes
    return operation.name == ShardOp.OPERATION_NAME and "reshard" in attrs and ir.BoolAttr(attrs["reshard"]).value
