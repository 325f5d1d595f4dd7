"""`mtf-shard-update`: decide the layouts of weight-update and parameter sharding.

`mi.train_step(shard_update=...)` cannot know the layout when it builds the step (layout
rules usually arrive with `mi.compile`), so it leaves free `mtf.shard` markers `param = "w",
param_layout = "compute" | "update" | "stored"` and the data-parallel axes in the function's
`mtf.shard_update` attribute ("auto", or an array of axis names). This pass, which runs
before propagation with the same rules, chooses per parameter the dim its update is split
over, the *split dim*: the largest dim the data axes divide that is not yet split and that
no loop scans over, else the largest split dim they divide further (after the rules' axes).
Each marker becomes a boundary cut on that dim (`mtf.shard {param, cut}`: no layout of it
propagates through, so the update's layout never reaches the forward and backward ops):

- **compute** leaves the dim free, for the rules and the ops that read the value;
- **update** pins it to the update layout: the parameter's (written, else the rules', else
  replicated) with the data axes added;
- **stored** also writes that layout on the argument it reads: optimizer state (and, with
  parameter sharding, the parameter) is stored split between steps.

With the gradient in the update layout, the pending sum over the data axes becomes a
`reduce_scatter` instead of an `all_reduce`; the update computes on 1/n of each parameter;
the compute boundary on the new parameter is its `all_gather` (ZeRO 1-2, the seed paper
arXiv 2004.13336). With parameter sharding (ZeRO-3 / FSDP) the parameter stays stored split
and each use in the loss program is a compute boundary: the gather happens at the use,
inside a scanned layer's body, and again in the backward pass, which recomputes that body.

"auto" data axes are the mesh axes that split a dim of an argument that is neither a
parameter nor optimizer state (the batch), less every axis a parameter's layout uses.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect import attribute_names
from meshir.dialect.diagnostics import located_error
from meshir.dialect.layout_projection import axes_size
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.ops import ScanOp, ShardOp
from meshir.dialect.signature import defined_functions, entry_function, functions, refresh_function_type, signature
from meshir.dialect.tensor_type import TensorType, format_axes
from meshir.dialect.walk import ops_within

from ..infra.registry import ModulePass, option, register_pass

#: The step function's attribute naming the data-parallel axes ("auto" or an axis array), and
#: the one recording the dim and axes each parameter's update is split over.
AXES_ATTR, DECISIONS_ATTR = attribute_names.SHARD_UPDATE, attribute_names.UPDATE_SHARDING


@register_pass
@dataclass
class ShardUpdatePass(ModulePass):
    NAME = "mtf-shard-update"
    SUMMARY = "Decide the layouts of weight-update and parameter sharding left by mi.train_step(shard_update=...)"
    rules: LayoutRules = option(LayoutRules(), "layout rules added to each function's mtf.layout_rules "
                                               "(give the ones mtf-propagate-sharding gets)")
    off: bool = option(False, "turn weight-update sharding off: each marker gives way to its operand")

    def apply(self, module_op) -> None:
        if self.off:
            drop_parameter_markers(module_op)
            return
        markers = parameter_markers(module_op)
        if not markers:
            return
        steps = [f for f in functions(module_op) if AXES_ATTR in f.attributes]
        if len(steps) != 1:
            fn = steps[1] if steps else entry_function(module_op)
            raise located_error(fn.location, f"mtf-shard-update needs exactly one function with {AXES_ATTR}, "
                                       f"found {len(steps)}")
        step = steps[0]
        mesh = function_mesh(step, module_meshes(module_op))
        if mesh is None:
            raise located_error(step.location, "weight-update sharding needs a mesh")
        plan = UpdatePlan.of(step, markers, mesh, LayoutRules.from_attribute(step).merged(self.rules),
                             _scanned_dims(module_op))
        for op in markers:
            plan.resolve(op, step)
        refresh_function_type(step)
        del step.attributes[AXES_ATTR]
        step.attributes[DECISIONS_ATTR] = plan.decisions()


def with_shard_update(passes: list, module_op, rules: LayoutRules) -> list:
    """`passes` (a pipeline that propagates) preceded by mtf-shard-update when `module_op`
    has markers waiting for it (mi.train_step(shard_update=...)'s)."""
    return ([ShardUpdatePass(rules=rules)] if parameter_markers(module_op) else []) + list(passes)


def parameter_markers(module_op) -> list:
    """The `mtf.shard` ops still waiting for this pass."""
    return [op for fn in defined_functions(module_op) for op in ops_within(fn.regions[0].blocks[0])
            if isinstance(op, ShardOp) and "param_layout" in op.operation.attributes]


def drop_parameter_markers(module_op) -> None:
    """Weight-update sharding off: each waiting marker gives way to its operand, and the step
    no longer asks for the pass (what mi.train_step without shard_update builds)."""
    for op in parameter_markers(module_op):
        op.operation.results[0].replace_all_uses_with(op.operation.operands[0])
        op.operation.erase()
    for fn in defined_functions(module_op):
        if AXES_ATTR in fn.attributes:
            del fn.attributes[AXES_ATTR]


def _scanned_dims(module_op) -> set[str]:
    """Dims some mtf.scan iterates over: splitting one would put each iteration on few devices."""
    out = set()
    for fn in defined_functions(module_op):
        for op in ops_within(fn.regions[0].blocks[0]):
            if isinstance(op, ScanOp) and "dim" in op.operation.attributes:
                out.add(ir.StringAttr(op.operation.attributes["dim"]).value)
    return out


def insert_marker(value, param: str, which: str, loc, ip):
    """A free marker of `value` (an MLIR value) asking for `param`'s `which` layout, inserted
    at `ip`: its result (mtf-gather-params-at-uses, mtf-mark-update-in-loops)."""
    attrs = {"param": ir.StringAttr.get(param), "param_layout": ir.StringAttr.get(which)}
    return ShardOp(TensorType.from_mlir(value.type).without_layout().to_mlir(), [value], attrs, loc=loc, ip=ip).result


def marker_fields(op) -> tuple[str, str]:
    """(parameter, which layout) of a marker."""
    attrs = op.operation.attributes
    return ir.StringAttr(attrs["param"]).value, ir.StringAttr(attrs["param_layout"]).value


@dataclass
class UpdatePlan:
    """Per parameter, its split dim and that dim's axes in the update layout (the rules'
    first, the data axes after), or None where the update is not split."""

    splits: dict[str, tuple[str, tuple[str, ...]] | None]

    @classmethod
    def of(cls, step, markers, mesh, rules: LayoutRules, scanned: set[str]) -> "UpdatePlan":
        sig = signature(step)
        types = dict(zip(sig.arg_names, sig.arg_types))
        params = sorted({marker_fields(op)[0] for op in markers})
        for p in params:
            if p not in types:
                raise located_error(step.location, f"weight-update sharding names parameter '{p}', which is not an "
                                                   f"argument of @{sig.function} ({', '.join(sig.arg_names)})")
        layouts = {p: {d.name: d.axes if d.axes is not None else rules.get(d.name, ()) for d in types[p].dims}
                   for p in params}
        axes = _data_axes(step, sig, types, markers, layouts, rules, mesh)
        splits = {}
        for p in params:
            used = {a for dim_axes in layouts[p].values() for a in dim_axes}
            extra = tuple(a for a in axes if a not in used)
            dim = _split_dim(step, p, types[p], layouts[p], extra, mesh, scanned) if extra else None
            splits[p] = (dim, layouts[p][dim] + extra) if dim is not None else None
        return cls(splits)

    def resolve(self, op, step) -> None:
        """Make the marker a boundary cut on its parameter's split dim: `update` and `stored`
        pin that dim to the update layout (`stored` also writes it on the argument it reads),
        `compute` leaves it free for the rules and the ops that read the value. A marker of
        a parameter that is not split, or on a value without that dim, goes away."""
        param, which = marker_fields(op)
        split = self.splits[param]
        result = op.operation.results[0]
        t = TensorType.from_mlir(result.type)
        if split is None or not t.has(split[0]):
            result.replace_all_uses_with(op.operation.operands[0])
            op.operation.erase()
            return
        dim, axes = split
        if which != "compute":
            result.set_type(t.with_layout({dim: axes}).to_mlir())
            operand = op.operation.operands[0]
            if which == "stored" and _argument_number(operand, step) is not None:
                operand.set_type(TensorType.from_mlir(operand.type).with_layout({dim: axes}).to_mlir())
        del op.operation.attributes["param_layout"]
        op.operation.attributes["cut"] = ir.ArrayAttr.get([ir.StringAttr.get(dim)])

    def decisions(self) -> ir.DictAttr:
        """`{w = {dim = "d_model", axes = ["x"]}}` for each parameter whose update is split."""
        def entry(dim, axes):
            return ir.DictAttr.get({"dim": ir.StringAttr.get(dim),
                                    "axes": ir.ArrayAttr.get([ir.StringAttr.get(a) for a in axes])})

        return ir.DictAttr.get({p: entry(*s) for p, s in self.splits.items() if s is not None})


def _argument_number(value, fn) -> int | None:
    """Which argument of `fn` `value` is, or None."""
    if isinstance(value, ir.BlockArgument) and value.owner == fn.regions[0].blocks[0]:
        return value.arg_number
    return None


def _data_axes(step, sig, types, markers, layouts, rules, mesh) -> tuple[str, ...]:
    attr = step.attributes[AXES_ATTR]
    if isinstance(attr, ir.ArrayAttr):
        axes = tuple(ir.StringAttr(a).value for a in attr)
        unknown = [a for a in axes if a not in mesh.shape]
        if unknown:
            raise located_error(step.location, f"shard_update names mesh axis '{unknown[0]}', which mesh "
                                         f"@{mesh.name} does not have ({mesh.format_axes()})")
        return axes
    numbers = {_argument_number(op.operation.operands[0], step) for op in markers}
    state = {sig.arg_names[k] for k in numbers if k is not None}
    found = set()
    for name, t in types.items():
        if name in layouts or name in state:
            continue
        for d in t.dims:
            found.update(d.axes if d.axes is not None else rules.get(d.name, ()))
    used = {a for layout in layouts.values() for dim_axes in layout.values() for a in dim_axes}
    axes = tuple(a for a in mesh.shape if a in found and a not in used)
    if not axes:
        raise located_error(step.location, "shard_update=True found no data-parallel mesh axis: none splits an argument "
                      "other than the parameters and their optimizer state without also splitting a parameter "
                      f"(mesh {mesh.format_axes()}, rules {rules or 'none'}); name the axes, e.g. shard_update=('x',)")
    return axes


def _split_dim(step, param: str, t: TensorType, layout, extra, mesh, scanned) -> str:
    """The dim of `param` its update is split over the axes `extra`."""
    n = axes_size(extra, mesh.shape)

    def devices(dim):
        return axes_size(layout[dim.name], mesh.shape)

    fits = [d for d in t.dims if d.name not in scanned and d.size % (devices(d) * n) == 0]
    unsplit = [d for d in fits if not layout[d.name]]
    for group in (unsplit, fits):
        if group:
            return max(group, key=lambda d: (d.size // devices(d), -t.dims.index(d))).name
    dims = ", ".join(f"{d.name}={d.size}" + (f" (split over {format_axes(layout[d.name])})" if layout[d.name] else "")
                     + (" (scanned)" if d.name in scanned else "") for d in t.dims) or "none: a scalar"
    raise located_error(step.location, f"shard_update over mesh axes {format_axes(extra)} ({n} devices) divides no "
                                       f"dim of parameter '{param}' ({dims}); leave '{param}' out of params, or "
                                       "shard over fewer axes")
