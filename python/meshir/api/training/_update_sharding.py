"""Weight-update sharding and parameter sharding for `mi.train_step` (ZeRO 1-2 and ZeRO-3).

    step = mi.train_step(loss, mi.Adam(), shard_update=True)                     # ZeRO 1-2
    step = mi.train_step(loss, mi.Adam(), shard_update=True, shard_params=True)  # ZeRO-3 / FSDP
    exe = mi.compile(step, layout={"batch": "x", "d_ff": "y"})

The layouts depend on the layout rules, which usually arrive with `mi.compile`, so the step
only marks where they go: free `mtf.shard` markers naming a parameter and which of its
layouts they want (`compute`, `update` or `stored`), plus the data-parallel axes on the
function.
The pass `mtf-shard-update` (transforms/shard_update.py) decides them before propagation.
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect import MeshIRTypeError, MeshIRValueError, TensorType, get_context
from meshir.dialect.ops import LoopOp, ShardOp
from meshir.dialect.signature import entry_function, function_name, functions, signature
from meshir.transforms.shard_update import AXES_ATTR, marker_fields, parameter_markers

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, located_error
from meshir.api.programs.tensor import Tensor

def check_shard_update(shard_update, shard_params) -> str | tuple[str, ...] | None:
    """"auto" (True), the named axes, or None (off); shard_params needs shard_update."""
    checks.flag(shard_params, "shard_params of mi.train_step")
    if shard_update is None or shard_update is False:
        if shard_params:
            raise located_error("shard_params=True needs shard_update (True or the data-parallel axes): parameters "
                                "are stored split over the axes their update is split over", MeshIRValueError)
        return None
    if shard_update is True:
        return "auto"
    if isinstance(shard_update, (int, float)) and not isinstance(shard_update, bool):
        raise located_error(f"shard_update must be True, False or mesh axis names, got {checks.describe(shard_update)}",
                            MeshIRTypeError)
    axes = checks.axes(shard_update, "shard_update axes")
    if not axes:
        raise located_error("shard_update names no mesh axis (give True for the data-parallel axes)", MeshIRValueError)
    return axes


def finish_step(prog, spec) -> None:
    """Give the finished step (its gradient's call inlined, so its scans are in the step) the
    data axes `spec` for mtf-shard-update, and its stacked or accumulated gradients their
    markers inside the loops (reduce_scatter_in_loops)."""
    with prog.context:
        axes = ir.StringAttr.get(spec) if spec == "auto" else ir.ArrayAttr.get([ir.StringAttr.get(a) for a in spec])
        prog.function.attributes[AXES_ATTR] = axes
        reduce_scatter_in_loops(prog.module.operation)


def marked(t: Tensor, param: str, which: str) -> Tensor:
    """`t` under a free marker that mtf-shard-update gives `param`'s `which` layout."""
    return build(ShardOp, t.type.without_layout(), [t], {"param": param, "param_layout": which})


def _insert_marker(value, param: str, which: str, loc, ip):
    """A marker of `value` (a raw MLIR value) inserted at `ip`: its result."""
    attrs = {"param": ir.StringAttr.get(param), "param_layout": ir.StringAttr.get(which)}
    return ShardOp(TensorType.from_mlir(value.type).without_layout().to_mlir(), [value], attrs, loc=loc, ip=ip).result


def gather_at_uses(module, params) -> ir.Module:
    """A copy of the loss program in which every use of a parameter reads it through a
    `compute` marker placed at the use: inside the body of a loop that receives it (a
    scanned layer's slice is gathered per iteration, and again when the backward pass
    recomputes the body) and inside a called function (mi.remat's recomputation gathers
    again). Parameters stored split are gathered only where they are needed."""
    with get_context():
        copy = module.operation.clone()
        fn = entry_function(copy)
        names = signature(fn).arg_names
        by_name = {function_name(f): f for f in functions(copy)}
        for k, name in enumerate(names):
            if name in params:
                _mark_uses(fn.regions[0].blocks[0].arguments[k], name, by_name, set())
    return copy


def _mark_uses(value, param: str, by_name: dict, seen: set) -> None:
    """Put a compute marker between the block argument `value` and each op that reads it
    (descending into loop bodies and callees: their block arguments are marked instead)."""
    direct = []
    for use in list(value.uses):
        owner, k = use.owner, use.operand_number
        inner = _inner_arguments(owner, k, by_name)
        if inner is None:
            direct.append((owner, k))
            continue
        for arg in inner:
            if (id(arg.owner), arg.arg_number) not in seen:
                seen.add((id(arg.owner), arg.arg_number))
                _mark_uses(arg, param, by_name, seen)
    if not direct:
        return
    marker = _insert_marker(value, param, "compute", direct[0][0].location, ir.InsertionPoint.at_block_begin(value.owner))
    for owner, k in direct:
        owner.operation.operands[k] = marker


def _inner_arguments(owner, k: int, by_name: dict):
    """The block arguments that receive operand `k` of a loop or a call, or None for any
    other op (and for a loop's carried operand: it changes each iteration)."""
    op = owner.opview if hasattr(owner, "opview") else owner
    if isinstance(op, LoopOp):
        if k < op.carried:
            return None
        shift = 1 if op.operation.name == "mtf.scan" else 0  # a scan's body starts with the index
        return [region.blocks[0].arguments[k + shift] for region in op.operation.regions]
    if op.operation.name == "func.call":
        callee = by_name.get(ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value)
        if callee is not None and len(callee.regions[0].blocks):
            return [callee.regions[0].blocks[0].arguments[k]]
    return None


def reduce_scatter_in_loops(module_op) -> None:
    """A gradient that a scan stacks (a scanned layer's parameter) or carries (the sum over
    microbatches) is constrained in the scan's body too, where each iteration yields its
    slice or its running sum: each pending sum over the data axes is reduce-scattered there,
    so neither the stacked gradient nor the accumulator is ever whole."""
    pending = [op for op in parameter_markers(module_op) if marker_fields(op)[1] == "update"]
    while pending:
        marker = pending.pop()
        value = marker.operation.operands[0]
        owner = value.owner if isinstance(value, ir.OpResult) else None
        if owner is None or owner.name != "mtf.scan":
            continue
        scan = owner.opview
        k = value.result_number
        yield_op = list(scan.body_block().operations)[-1]
        if k < scan.carried:  # a running sum: mark what each iteration adds, not the carry
            reader, slot = _contribution(yield_op.operation.operands[k], scan.body_block().arguments[1 + k])
        else:
            reader, slot = yield_op, k
        if reader is None:
            continue
        inner = _insert_marker(reader.operation.operands[slot], marker_fields(marker)[0], "update", marker.location,
                               ir.InsertionPoint(reader))
        reader.operation.operands[slot] = inner
        pending.append(inner.owner.opview)


def _contribution(yielded, carry):
    """(the mtf.add, operand index) of what an iteration adds to the running sum `carry`,
    when it yields `carry + contribution`; (None, None) for any other carry."""
    owner = yielded.owner if isinstance(yielded, ir.OpResult) else None
    if owner is None or owner.name != "mtf.add":
        return None, None
    operands = list(owner.operands)
    if carry not in operands:
        return None, None
    return owner.opview, 1 - operands.index(carry)

