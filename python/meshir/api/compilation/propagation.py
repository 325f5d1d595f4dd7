"""`propagate` and `layout_table`: sharding propagation from Python, and a readable view of
every value's layout."""
from __future__ import annotations

from meshir.dialect import Mesh, MeshIRError, TensorType, get_context
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import defined_functions, function_name, signature
from meshir.dialect.tensor_type import format_axes
from meshir.transforms import PASSES, Pipeline
from meshir.transforms.passes.shard_update import with_shard_update

from meshir.api import _checks as checks


@reports_at_call_site
def propagate(program_or_module, layout: dict | None = None, strict: bool = False):
    """A copy of the program's module in which every dim of every value has a layout.

    `layout` adds Mesh-TensorFlow layout rules (`{"batch": "x", "d_ff": ("x", "y")}`, a
    `LayoutRules`, or text: `"batch:x,d_ff:(x,y)"`, `"batch:x;d_ff:y"`) to the ones the
    program states; the program itself is left unchanged. Runs mtf-shard-update (a
    `mi.train_step(shard_update=...)`'s layouts) and mtf-propagate-sharding
    through the pass manager (verified before and after). `strict`: a rule naming a mesh axis
    the mesh lacks is an error, not ignored with a warning (as `mi.compile`'s).
    """
    module = checks.module_of(program_or_module, "the program to propagate")
    rules = checks.rules_for_module(checks.layout_rules(layout, "layout rules"), module, strict)
    with get_context():
        copy = module.operation.clone()
    Pipeline(with_shard_update([PASSES["mtf-propagate-sharding"](rules=rules)], copy, rules)).apply(copy)
    return copy


@reports_at_call_site
def layout_table(program_or_module) -> str:
    """Every value of every function: name, producing op, dims with layouts, and the shard
    shape one device holds."""
    module = checks.module_of(program_or_module, "the program of mi.layout_table")
    meshes = module_meshes(module.operation)
    lines = []
    for fn in defined_functions(module):
        mesh = function_mesh(fn, meshes)
        lines.append(f"@{function_name(fn)}" + (f" on mesh {mesh}" if mesh else " (no mesh)"))
        rows = [("value", "op", "dims", "shard shape")]
        block = fn.regions[0].blocks[0]
        arg_names = signature(fn).arg_names
        for name, arg in zip(arg_names, block.arguments):
            rows.append((f"{name} ({arg.get_name()})", "argument", *_describe(arg.type, mesh)))
        for op in block.operations:
            for result in op.operation.results:
                rows.append((result.get_name(), op.operation.name, *_describe(result.type, mesh)))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def _describe(mlir_type, mesh: Mesh | None) -> tuple[str, str]:
    try:
        t = TensorType.from_mlir(mlir_type)
    except ValueError:
        return str(mlir_type), ""
    dims = " ".join(f"{d.name}={d.size}@{format_axes(d.axes) if d.axes is not None else '?'}" for d in t.dims)
    dims = (dims + " " if dims else "") + t.element_type
    if t.partial:
        dims += f" partial@{format_axes(t.partial)}"
    try:
        shard = str(t.local_shape(mesh.shape)) if mesh else str(t.shape)
    except ValueError as e:
        raise MeshIRError(str(e)) from None
    return dims, shard
