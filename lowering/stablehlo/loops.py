"""Loops (dialect/ops/loops.py) as `stablehlo.while`, in either mode.

A body's ops are lowered by the function's own rules into the while's body region; the
region sees only its block arguments (bodies are isolated from above, and the builder
caches nothing across a region's edge), so device coordinates are recomputed inside.

`mtf.scan` carries `(step, carry..., xs..., invariants..., ys...)`; the index `i` is the step,
or `length - 1 - step` in reverse. Each iteration slices every x at `i` along the scanned dim (whole on every device: propagation replicates it), runs the
body, writes each y into its stacked buffer at `i` (`dynamic_update_slice`), and steps `i`;
the condition is `i < length`. `mtf.while` carries `(carry..., invariants...)`; its `cond`
region lowers to the while's condition.
"""
from __future__ import annotations

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import ScanOp, WhileOp

from . import builder as hlo
from .context import FunctionLowering
from .types import Local

INDEX = "i32"


@rule("lower", ScanOp)
def scan(p: FunctionLowering, op) -> list[Local]:
    b = p.b
    carries, xs_count, length = op.carried, op.xs_count, op.attr("length")
    operands = p.operands(op)
    xs_types = op.operand_types[carries:carries + xs_count]
    axes = [t.index(op.attr("dim")) for t in xs_types]
    ys_types = op.result_types[carries:]
    buffers = [hlo.constant(b, 0, t.element_type, p.shape(t)) for t in ys_types]
    state = [hlo.constant(b, 0, INDEX)] + operands + buffers
    block = op.body_block()

    def cond(args: list[Local]) -> Local:
        return hlo.compare(b, "LT", args[0], hlo.constant(b, length, INDEX))

    def body(args: list[Local]) -> list[Local]:
        step, rest = args[0], args[1:]
        i = hlo.binary(b, "subtract", hlo.constant(b, length - 1, INDEX), step) if op.attr("reverse") else step
        carry, xs = rest[:carries], rest[carries:carries + xs_count]
        invariants, ys = rest[carries + xs_count:len(operands)], rest[len(operands):]
        slices = [_take(b, x, i, a) for x, a in zip(xs, axes)]
        p.values.update(zip(block.arguments, [i] + carry + slices + invariants))
        out = p.lower_block(block)
        zero = hlo.constant(b, 0, INDEX)
        stacked = [hlo.dynamic_update_slice(b, buf, hlo.reshape(b, y, (1,) + y.shape), [i] + [zero] * y.rank)
                   for buf, y in zip(ys, out[carries:])]
        step = hlo.binary(b, "add", step, hlo.constant(b, 1, INDEX))
        return [step] + out[:carries] + list(xs) + list(invariants) + stacked

    results = while_loop(b, state, cond, body)
    return results[1:1 + carries] + results[1 + len(operands):]


@rule("lower", WhileOp)
def while_(p: FunctionLowering, op) -> list[Local]:
    b = p.b
    state = p.operands(op)
    cond_block, body_block = op.body_block(0), op.body_block(1)
    carries = op.carried

    def cond(args: list[Local]) -> Local:
        p.values.update(zip(cond_block.arguments, args))
        (go,) = p.lower_block(cond_block)
        return go

    def body(args: list[Local]) -> list[Local]:
        p.values.update(zip(body_block.arguments, args))
        return p.lower_block(body_block) + args[carries:]

    return while_loop(b, state, cond, body)[:carries]


def while_loop(b: hlo.Builder, state: list[Local], cond, body) -> list[Local]:
    """`stablehlo.while` over `state`: `cond(args) -> i1 Local` and `body(args) -> state`,
    each called once, inside its own region."""
    regions = [hlo.region_text(b, [Local(b.fresh(), v.shape, v.elem) for v in state], make)
               for make in (lambda args: [cond(args)], body)]
    return b.ops("while", state, [(v.shape, v.elem) for v in state], region=", ".join(regions))


def _take(b: hlo.Builder, x: Local, i: Local, axis: int) -> Local:
    """`x`'s slice at index `i` along `axis`, without that axis."""
    zero = hlo.constant(b, 0, INDEX)
    sizes = tuple(1 if k == axis else n for k, n in enumerate(x.shape))
    window = hlo.dynamic_slice(b, x, [i if k == axis else zero for k in range(x.rank)], sizes)
    return hlo.reshape(b, window, tuple(n for k, n in enumerate(x.shape) if k != axis))
