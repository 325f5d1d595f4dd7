"""Weight-update sharding and parameter sharding for `mi.train_step` (ZeRO 1-2 and ZeRO-3).

    step = mi.train_step(loss, mi.Adam(), shard_update=True)                     # ZeRO 1-2
    step = mi.train_step(loss, mi.Adam(), shard_update=True, shard_params=True)  # ZeRO-3 / FSDP
    exe = mi.compile(step, layout={"batch": "x", "d_ff": "y"})

The layouts depend on the layout rules, which usually arrive with `mi.compile`, so the step
only marks where they go: free `mtf.shard` markers naming a parameter and which of its
layouts they want (`compute`, `update` or `stored`), plus the data-parallel axes on the
function.
The pass `mtf-shard-update` (transforms/passes/shard_update.py) decides them before propagation;
`mtf-gather-params-at-uses` and `mtf-mark-update-in-loops` place the markers that are not
at a result.
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect import MeshIRTypeError, MeshIRValueError, get_context
from meshir.dialect.ops import ShardOp
from meshir.transforms import Pipeline
from meshir.transforms.passes.gather_params_at_uses import GatherParamsAtUsesPass
from meshir.transforms.passes.mark_update_in_loops import MarkUpdateInLoopsPass
from meshir.dialect.attribute_names import SHARD_UPDATE

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
    markers inside the loops (`mtf-mark-update-in-loops`)."""
    with prog.context:
        axes = ir.StringAttr.get(spec) if spec == "auto" else ir.ArrayAttr.get([ir.StringAttr.get(a) for a in spec])
        prog.function.attributes[SHARD_UPDATE] = axes
    Pipeline([MarkUpdateInLoopsPass()]).apply(prog.module.operation)


def marked(t: Tensor, param: str, which: str) -> Tensor:
    """`t` under a free marker that mtf-shard-update gives `param`'s `which` layout."""
    return build(ShardOp, t.type.without_layout(), [t], {"param": param, "param_layout": which})


def gather_at_uses(module, params) -> ir.Module:
    """A copy of the loss program in which every use of a parameter reads it through a
    `compute` marker placed at the use (`mtf-gather-params-at-uses`): parameters stored
    split are gathered only where they are needed."""
    with get_context():
        copy = module.operation.clone()
    Pipeline([GatherParamsAtUsesPass(params=tuple(params))]).apply(copy)
    return copy
