"""Tracing a loop body: Python builds ops into a block of its own, which becomes the loop's
region. An outer value the body uses becomes an *invariant*: a block argument, with the outer
value as the loop's operand, so bodies are isolated from above (dialect/ops/loops.py) and
every pass can treat one like a function."""
from __future__ import annotations

from contextlib import contextmanager

from meshir._jax_private import ir
from meshir.dialect import TensorType

from meshir.api.programs.tensor import Tensor


class OpenBody:
    """One block being traced (a loop region), and the outer values it captured."""

    def __init__(self, arg_types: list[TensorType]):
        # A detached holder owns the block until the loop op exists (`move_into`).
        self._holder = ir.Operation.create("mtf.body", regions=1)
        self.block = self._holder.regions[0].blocks.append(*[t.to_mlir() for t in arg_types])
        self.invariants: list[ir.Value] = []  # outer values, in the order the body first used them
        self._captured: dict = {}  # outer value -> its block argument

    def arguments(self, program) -> list[Tensor]:
        return [Tensor(program, a) for a in self.block.arguments]

    def defines(self, value: ir.Value) -> bool:
        """`value` is defined in this block or in a block nested in it."""
        return any(block == self.block for block in _blocks_above(value))

    def capture(self, value: ir.Value) -> ir.Value:
        """The block argument standing for outer `value` (added on first use, layout free:
        propagation lays it out)."""
        if value not in self._captured:
            t = TensorType.from_mlir(value.type).without_layout()
            self._captured[value] = self.block.add_argument(t.to_mlir(), ir.Location.unknown())
            self.invariants.append(value)
        return self._captured[value]

    def move_into(self, loop_op, region: int) -> None:
        """Hand the block to the loop op's (empty) region and drop the holder."""
        self.block.append_to(loop_op.operation.regions[region])
        self.discard()

    def discard(self) -> None:
        if self._holder is not None:
            self._holder.erase()
            self._holder = None


def _blocks_above(value: ir.Value):
    """The block that defines `value`, then every block enclosing it."""
    owner = value.owner
    block = owner if isinstance(owner, ir.Block) else owner.operation.block
    while block is not None:
        yield block
        op = block.owner
        if op is None or not op.operation.attached or op.operation.parent is None:  # a holder, the module
            return
        block = op.operation.block


@contextmanager
def tracing(program, body: OpenBody):
    """Build ops into `body` for the duration (nested loops stack)."""
    saved = program.block
    program._bodies.append(body)
    program.block = body.block
    try:
        yield
    finally:
        program.block = saved
        program._bodies.pop()


def local_value(program, value: ir.Value) -> ir.Value:
    """`value` as an op being built sees it: inside open loop bodies, a value defined
    outside the innermost is captured by each body nested in the one that defines it (all of
    them for a function's value), outermost first. (A body being traced sits in a detached
    holder, not in its enclosing body's block, so only the innermost definer counts.)"""
    bodies = program._bodies
    owner = next((i for i in reversed(range(len(bodies))) if bodies[i].defines(value)), -1)
    for body in bodies[owner + 1:]:
        value = body.capture(value)
    return value
