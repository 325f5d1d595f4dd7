"""An Executable of a module that is already StableHLO: a MeshIR export read back
(`mi.load`), or what `meshir-opt ... --mtf-lower-to-stablehlo` wrote (`mi.compile` of it).

The signature an Executable places arguments by is rebuilt from the entry's attributes: each
argument's and result's `mtf.type` (its MeshIR type, which exports write) when present;
otherwise its tensor type and `sdy.sharding`, with dims named `d0`, `d1`, ... and laid out
as the sharding says. Names are `mtf.name`, else `arg<i>` and `result<i>`. The mesh is the
module's `sdy.mesh`; a mesh given by the caller must have the same axes and brings its devices.
"""
from __future__ import annotations

from meshir._jax_private import ir, sdy
from meshir.dialect import attribute_names
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.mesh import Mesh, function_mesh, module_meshes
from meshir.dialect.modes import EXPLICIT, GSPMD
from meshir.dialect.signature import FunctionSignature, function_name, functions
from meshir.dialect.tensor_type import Dimension, TensorType
from meshir.dialect.element_types import element_type_name

from .executable import Executable
from .jax_export import FUNCTION_ATTRIBUTE


def executable_from_stablehlo(module_op, mesh: Mesh | None = None, function: str | None = None,
                              what: str = "the StableHLO module") -> Executable:
    """Compile the lowered module `module_op` (entry `function`, else `@main`, else its only
    public function) for `mesh`'s devices, or the backend's first ones."""
    entry = _entry(module_op, function, what)
    declared = function_mesh(entry, module_meshes(module_op))
    if declared is None:
        raise MeshIRError(f"{what} declares no sdy.mesh for @{function_name(entry)}: it is not a lowered MeshIR program")
    if mesh is not None:
        if mesh.axes != declared.axes:
            raise MeshIRError(f"the mesh given ({mesh}) differs from the one {what} was lowered for ({declared})")
        declared = mesh
    signature = _signature(entry, declared, what)
    mode = EXPLICIT if "sdy.manual_computation" in str(entry) else GSPMD
    return Executable(module_op, declared, signature, mode=mode)


def is_lowered(module_op) -> bool:
    """Whether a module holds StableHLO only (no `mtf` op, no `!mtf` type in a function's
    signature): nothing left to partition. (Attributes named mtf.*, such as an export's
    `mtf.type`, do not count.)"""
    fns = list(functions(module_op))
    if not fns:
        return False
    found = []

    def visit(op):
        if op.name.startswith("mtf."):
            found.append(op.name)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module_op.operation.walk(visit)
    return not found and not any("!mtf" in str(ir.TypeAttr(f.attributes["function_type"]).value) for f in fns)


def _entry(module_op, function: str | None, what: str):
    fns = list(functions(module_op))
    names = [function_name(f) for f in fns]
    if function is not None:
        if function not in names:
            raise MeshIRError(f"{what} has no function @{function} (functions: {', '.join('@' + n for n in names)})")
        return fns[names.index(function)]
    if "main" in names:
        return fns[names.index("main")]
    public = [f for f in fns if "sym_visibility" not in f.attributes
              or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"]
    if len(public) != 1:
        raise MeshIRError(f"{what} has {len(public)} public functions ({', '.join('@' + n for n in names)}); "
                          "say which one to run with function=")
    return public[0]


def _signature(entry, mesh: Mesh, what: str) -> FunctionSignature:
    fn_type = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)
    name = function_name(entry)
    if FUNCTION_ATTRIBUTE in entry.attributes:  # an export's @main
        name = ir.StringAttr(entry.attributes[FUNCTION_ATTRIBUTE]).value
    arg_names, arg_types = _described(entry, "arg_attrs", fn_type.inputs, "arg", mesh, f"{what}, @{name}")
    result_names, result_types = _described(entry, "res_attrs", fn_type.results, "result", mesh, f"{what}, @{name}")
    return FunctionSignature(name, arg_names, arg_types, result_names, result_types)


def _described(entry, attr_name: str, types, prefix: str, mesh: Mesh, what: str):
    attrs = list(ir.ArrayAttr(entry.attributes[attr_name])) if attr_name in entry.attributes else [None] * len(types)
    names, out = [], []
    for i, (t, attr) in enumerate(zip(types, attrs)):
        d = ir.DictAttr(attr) if attr is not None else None
        names.append(ir.StringAttr(d[attribute_names.NAME]).value if d is not None and attribute_names.NAME in d else f"{prefix}{i}")
        if d is not None and attribute_names.TYPE in d:
            out.append(TensorType.parse(ir.StringAttr(d[attribute_names.TYPE]).value))
        else:
            out.append(_type_of(t, d["sdy.sharding"] if d is not None and "sdy.sharding" in d else None,
                                mesh, f"{what} {prefix} #{i}"))
    return tuple(names), tuple(out)


def _type_of(t, sharding, mesh: Mesh, what: str) -> TensorType:
    """The MeshIR type of a StableHLO tensor laid out by an `sdy.sharding` (None: replicated)."""
    try:
        ranked = ir.RankedTensorType(t)
    except ValueError:
        raise MeshIRError(f"{what} has type {t}, not a ranked tensor") from None
    axes = [()] * ranked.rank
    if sharding is not None:
        dims = sdy.TensorShardingAttr(sharding).dimension_shardings
        axes = [tuple(sdy.AxisRefAttr(a).name for a in sdy.DimensionShardingAttr(d).axes) for d in dims]
    for a in (a for dim_axes in axes for a in dim_axes):
        mesh.axis_size(a)  # an axis the mesh lacks is an error naming both
    dims = [Dimension(f"d{i}", size, tuple(dim_axes)) for i, (size, dim_axes) in enumerate(zip(ranked.shape, axes))]
    return TensorType.make(dims, element_type_name(str(ranked.element_type)))
