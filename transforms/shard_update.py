"""`mtf-shard-update`: decide the layouts of weight-update and parameter sharding.

`mi.train_step(shard_update=...)` cannot know the layout when it builds the step (layout
rules usually arrive with `mi.compile`), so it leaves free `mtf.shard` constraints marked
`param = "w", param_layout = "compute" | "update"` and the data-parallel axes in the
function's `mtf.shard_update` attribute ("auto", or an array of axis names). This pass,
which runs before propagation with the same rules, turns each marker into an ordinary
constraint on a boundary (`mtf.shard {param, cut}`: no layout propagates through its cut dim, so the update's
layout never reaches the forward and backward ops):

- **compute**: the layout `w` computes with: its written layout, else the rules', else
  replicated — every dim pinned, so the data axes stay off the forward and backward ops;
- **update**: the compute layout with the data axes added to one dim (the largest dim they
  divide that is not yet split and that no loop scans over; else the largest split dim
  they divide further). An update marker on a function argument also writes that layout on
  the argument: optimizer state (and, with parameter sharding, the parameter) is stored
  split between steps.

With the gradient constrained to the update layout, the pending sum over the data axes
becomes a `reduce_scatter` instead of an `all_reduce`; the update computes on 1/n of each
parameter; the compute constraint on the new parameter is its `all_gather` (ZeRO 1-2, the
seed paper arXiv 2004.13336). With parameter sharding (ZeRO-3 / FSDP) the parameter stays
in the update layout and each use in the loss program is a compute marker: the gather
happens at the use, inside a scanned layer's body, and again in the backward pass, which
recomputes that body.

"auto" data axes are the mesh axes that split a dim of an argument that is neither a
parameter nor optimizer state (the batch), less every axis a parameter's compute layout uses.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.diagnostics import Diagnostic, MeshIRError
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import defined_functions, entry_function, functions, refresh_function_type, signature
from meshir.dialect.tensor_type import TensorType, format_axes
from meshir.dialect.walk import ops_within

from .registry import ModulePass, option, register_pass

#: The step function's attribute naming the data-parallel axes ("auto" or an axis array).
AXES_ATTR = "mtf.shard_update"
#: Records, on the step function, the dim and axes each parameter's update is split over.
DECISIONS_ATTR = "mtf.update_sharding"


@register_pass
@dataclass
class ShardUpdatePass(ModulePass):
    NAME = "mtf-shard-update"
    SUMMARY = "Decide the layouts of weight-update and parameter sharding left by mi.train_step(shard_update=...)"
    rules: LayoutRules = option(LayoutRules(), "layout rules added to each function's mtf.layout_rules "
                                               "(give the ones mtf-propagate-sharding gets)")

    def apply(self, module_op) -> None:
        markers = parameter_markers(module_op)
        if not markers:
            return
        steps = [f for f in functions(module_op) if AXES_ATTR in f.attributes]
        if len(steps) != 1:
            fn = steps[1] if steps else entry_function(module_op)
            raise located(fn.location, f"mtf-shard-update needs exactly one function with {AXES_ATTR}, "
                                       f"found {len(steps)}")
        step = steps[0]
        mesh = function_mesh(step, module_meshes(module_op))
        if mesh is None:
            raise located(step.location, "weight-update sharding needs a mesh")
        plan = UpdatePlan.of(step, markers, mesh, LayoutRules.from_attribute(step).merged(self.rules),
                             _scanned_dims(module_op))
        for op in markers:
            plan.resolve(op, step)
        refresh_function_type(step)
        del step.attributes[AXES_ATTR]
        step.attributes[DECISIONS_ATTR] = plan.decisions()


def located(location, message: str) -> MeshIRError:
    """A MeshIRError at `location`, which meshir-opt reports at that line."""
    diagnostic = Diagnostic(location, message)
    return MeshIRError(str(diagnostic), [diagnostic])


def parameter_markers(module_op) -> list:
    """The `mtf.shard` ops still waiting for this pass."""
    return [op for fn in defined_functions(module_op) for op in ops_within(fn.regions[0].blocks[0])
            if op.operation.name == "mtf.shard" and "param_layout" in op.operation.attributes]


def _scanned_dims(module_op) -> set[str]:
    """Dims some mtf.scan iterates over: splitting one would put each iteration on few devices."""
    out = set()
    for fn in defined_functions(module_op):
        for op in ops_within(fn.regions[0].blocks[0]):
            if op.operation.name == "mtf.scan" and "dim" in op.operation.attributes:
                out.add(ir.StringAttr(op.operation.attributes["dim"]).value)
    return out


def _marker_fields(op) -> tuple[str, str]:
    attrs = op.operation.attributes
    return ir.StringAttr(attrs["param"]).value, ir.StringAttr(attrs["param_layout"]).value


@dataclass
class UpdatePlan:
    """Per parameter: its compute layout (its written layout, else the rules', else
    replicated), its update layout ({dim: axes} for every dim) and the dim the data axes
    were added to (None: not split)."""

    compute: dict[str, dict[str, tuple[str, ...]]]
    update: dict[str, dict[str, tuple[str, ...]]]
    split_dim: dict[str, tuple[str, tuple[str, ...]] | None]

    @classmethod
    def of(cls, step, markers, mesh, rules: LayoutRules, scanned: set[str]) -> "UpdatePlan":
        sig = signature(step)
        types = dict(zip(sig.arg_names, sig.arg_types))
        params = sorted({_marker_fields(op)[0] for op in markers})
        for p in params:
            if p not in types:
                raise located(step.location, f"weight-update sharding names parameter '{p}', which is not an "
                                             f"argument of @{sig.function} ({', '.join(sig.arg_names)})")
        compute = {p: {d.name: d.axes if d.axes is not None else rules.get(d.name, ()) for d in types[p].dims}
                   for p in params}
        axes = _data_axes(step, sig, types, markers, compute, rules, mesh)
        update, split_dim = {}, {}
        for p in params:
            used = {a for dim_axes in compute[p].values() for a in dim_axes}
            extra = tuple(a for a in axes if a not in used)
            split_dim[p] = _split_dim(step, p, types[p], compute[p], extra, mesh, scanned) if extra else None
            update[p] = dict(compute[p])
            if split_dim[p] is not None:
                dim, _ = split_dim[p]
                update[p][dim] = compute[p][dim] + extra
        return cls(compute, update, split_dim)

    def resolve(self, op, step) -> None:
        """Make the marker a boundary on its parameter's split dim: `update` and `stored` pin
        that dim to the update layout (`stored` also writes it on the argument it reads),
        `compute` leaves it free for the rules and the ops that read the value. A marker
        of a parameter that is not split, or on a value without that dim, goes away."""
        param, which = _marker_fields(op)
        split = self.split_dim[param]
        result = op.operation.results[0]
        t = TensorType.from_mlir(result.type)
        if split is None or not t.has(split[0]):
            result.replace_all_uses_with(op.operation.operands[0])
            op.operation.erase()
            return
        dim = split[0]
        if which != "compute":
            laid_out = t.with_layout({dim: self.update[param][dim]})
            result.set_type(laid_out.to_mlir())
            operand = op.operation.operands[0]
            if which == "stored" and _argument_number(operand, step) is not None:
                operand.set_type(TensorType.from_mlir(operand.type).with_layout({dim: self.update[param][dim]}).to_mlir())
        del op.operation.attributes["param_layout"]
        op.operation.attributes["cut"] = ir.ArrayAttr.get([ir.StringAttr.get(dim)])

    def decisions(self) -> ir.DictAttr:
        """`{w = {dim = "d_model", axes = ["x"]}}`: per parameter whose update is split, the
        dim and all its axes in the update layout (the rules' first, the data axes after)."""
        def entry(p, dim):
            axes = ir.ArrayAttr.get([ir.StringAttr.get(a) for a in self.update[p][dim]])
            return ir.DictAttr.get({"dim": ir.StringAttr.get(dim), "axes": axes})

        return ir.DictAttr.get({p: entry(p, s[0]) for p, s in self.split_dim.items() if s is not None})


def update_split(fn) -> dict[str, tuple[str, tuple[str, ...]]]:
    """What mtf-shard-update recorded on `fn`: parameter -> (dim, axes of its update layout)."""
    if DECISIONS_ATTR not in fn.attributes:
        return {}
    out = {}
    for entry in ir.DictAttr(fn.attributes[DECISIONS_ATTR]):
        d = ir.DictAttr(entry.attr)
        out[entry.name] = (ir.StringAttr(d["dim"]).value, tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(d["axes"])))
    return out


def _argument_number(value, fn) -> int | None:
    """Which argument of `fn` `value` is, or None."""
    if isinstance(value, ir.BlockArgument) and value.owner == fn.regions[0].blocks[0]:
        return value.arg_number
    return None


def _data_axes(step, sig, types, markers, compute, rules, mesh) -> tuple[str, ...]:
    attr = step.attributes[AXES_ATTR]
    if isinstance(attr, ir.ArrayAttr):
        axes = tuple(ir.StringAttr(a).value for a in attr)
        unknown = [a for a in axes if a not in mesh.shape]
        if unknown:
            raise located(step.location, f"shard_update names mesh axis '{unknown[0]}', which mesh "
                                         f"@{mesh.name} does not have ({mesh.format_axes()})")
        return axes
    numbers = {_argument_number(op.operation.operands[0], step) for op in markers}
    state = {sig.arg_names[k] for k in numbers if k is not None}
    found = set()
    for name, t in types.items():
        if name in compute or name in state:
            continue
        for d in t.dims:
            found.update(d.axes if d.axes is not None else rules.get(d.name, ()))
    used = {a for layout in compute.values() for dim_axes in layout.values() for a in dim_axes}
    axes = tuple(a for a in mesh.shape if a in found and a not in used)
    if not axes:
        raise located(step.location, "shard_update=True found no data-parallel mesh axis: none splits an argument "
                      "other than the parameters and their optimizer state without also splitting a parameter "
                      f"(mesh {mesh.format_axes()}, rules {rules or 'none'}); name the axes, e.g. shard_update=('x',)")
    return axes


def _split_dim(step, param: str, t: TensorType, layout, extra, mesh, scanned) -> tuple[str, tuple[str, ...]]:
    """The dim of `param` its update is split over `extra`, with those axes."""
    n = 1
    for a in extra:
        n *= mesh.shape[a]

    def devices(dim):
        k = 1
        for a in layout[dim.name]:
            k *= mesh.shape[a]
        return k

    fits = [d for d in t.dims if d.name not in scanned and d.size % (devices(d) * n) == 0]
    unsplit = [d for d in fits if not layout[d.name]]
    for group in (unsplit, fits):
        if group:
            best = max(group, key=lambda d: (d.size // devices(d), -t.dims.index(d)))
            return best.name, extra
    dims = ", ".join(f"{d.name}={d.size}" + (f" (split over {format_axes(layout[d.name])})" if layout[d.name] else "")
                     + (" (scanned)" if d.name in scanned else "") for d in t.dims) or "none: a scalar"
    raise located(step.location, f"shard_update over mesh axes {format_axes(extra)} ({n} devices) divides no dim "
                                 f"of parameter '{param}' ({dims}); leave '{param}' out of params, or shard over "
                                 "fewer axes")
