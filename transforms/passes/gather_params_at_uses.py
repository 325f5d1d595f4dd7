"""`mtf-gather-params-at-uses`: parameter sharding's gathers, placed where a parameter is read.

With `mi.train_step(shard_params=True)` (ZeRO-3 / FSDP) a parameter is stored split between
steps, and each use in the loss program is a compute boundary: a free `mtf.shard` marker
(`param`, `param_layout = "compute"`) between the argument and the op that reads it, which
`mtf-shard-update` later turns into a cut. The marker goes inside the body of a loop that
receives the parameter (a scanned layer's slice is gathered per iteration, and again when
the backward pass recomputes the body) and inside a called function (`mi.remat`'s
recomputation gathers again), so a parameter is whole only where it is needed.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import func, ir
from meshir.dialect.ops import LoopOp, ScanOp
from meshir.dialect.signature import entry_function, function_name, functions, signature

from ..infra.registry import ModulePass, option, register_pass
from .shard_update import insert_marker


@register_pass
@dataclass
class GatherParamsAtUsesPass(ModulePass):
    NAME = "mtf-gather-params-at-uses"
    SUMMARY = "Read each named parameter of the entry function through a compute marker at each use (ZeRO-3)"

    params: tuple[str, ...] = option((), "the entry function's arguments stored split (parameters)")

    def apply(self, module_op) -> None:
        fn = entry_function(module_op)
        by_name = {function_name(f): f for f in functions(module_op)}
        for k, name in enumerate(signature(fn).arg_names):
            if name in self.params:
                _mark_uses(fn.regions[0].blocks[0].arguments[k], name, by_name, set())


def _mark_uses(value, param: str, by_name: dict, seen: set) -> None:
    """Put a compute marker between the block argument `value` and each op that reads it
    (descending into loop bodies and callees: their block arguments are marked instead)."""
    direct = []
    for use in list(value.uses):
        owner, k = use.owner, use.operand_number
        inner = _inner_arguments(owner.opview if hasattr(owner, "opview") else owner, k, by_name)
        if inner is None:
            direct.append((owner, k))
            continue
        for arg in inner:
            if (id(arg.owner), arg.arg_number) not in seen:
                seen.add((id(arg.owner), arg.arg_number))
                _mark_uses(arg, param, by_name, seen)
    if not direct:
        return
    marker = insert_marker(value, param, "compute", direct[0][0].location, ir.InsertionPoint.at_block_begin(value.owner))
    for owner, k in direct:
        owner.operands[k] = marker


def _inner_arguments(op, k: int, by_name: dict):
    """The block arguments that receive operand `k` of a loop or a call, or None for any
    other op (and for a loop's carried operand: it changes each iteration)."""
    if isinstance(op, LoopOp):
        if k < op.carried:
            return None
        shift = 1 if isinstance(op, ScanOp) else 0  # a scan's body starts with the index
        return [region.blocks[0].arguments[k + shift] for region in op.operation.regions]
    if isinstance(op, func.CallOp):
        callee = by_name.get(ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value)
        if callee is not None and len(callee.regions[0].blocks):
            return [callee.regions[0].blocks[0].arguments[k]]
    return None
