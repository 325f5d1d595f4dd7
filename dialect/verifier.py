"""Verify a module: MLIR's structural checks, then every `mtf` op's own rules and every
`!mtf.tensor` type against its function's mesh. Returns diagnostics located at the ops."""
from __future__ import annotations

import difflib

from meshir._jax_private import ir

from .diagnostics import Diagnostic, MeshIRError, VerifyError, raise_diagnostics
from .mesh import Mesh, function_mesh, module_meshes
from .ops.base import OP_CLASSES, check_type_on_mesh
from .tensor_type import TensorType, TypeContentError, TypeSyntaxError


def verify_module(module) -> list[Diagnostic]:
    """All diagnostics for `module` (a builtin.module op or ir.Module); empty when it is valid."""
    module_op = module.operation
    try:
        module_op.verify()
    except ir.MLIRError as e:
        from .context import mlir_error_diagnostics

        return mlir_error_diagnostics(e)
    diags: list[Diagnostic] = []
    meshes = _meshes(module_op, diags)
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            _verify_function(op, meshes, diags)
        else:
            _verify_region_ops(op.operation, None, diags)
    return diags


def check_module(module) -> None:
    """Raise MeshIRError with every diagnostic if `module` does not verify."""
    raise_diagnostics(verify_module(module))


def _meshes(module_op, diags) -> dict[str, Mesh]:
    try:
        return module_meshes(module_op)
    except MeshIRError as e:
        diags.append(Diagnostic(module_op.location, str(e)))
        return {}


def _verify_function(fn, meshes, diags) -> None:
    try:
        mesh = function_mesh(fn, meshes)
    except MeshIRError as e:
        diags.append(Diagnostic(fn.location, f"'func.func' op {e}"))
        return
    fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    for kind, types in (("argument", fn_type.inputs), ("result", fn_type.results)):
        for i, t in enumerate(types):
            problem = _type_problem(t, mesh)
            if problem:
                diags.append(Diagnostic(fn.location, f"'func.func' op {kind} #{i}: {problem}"))
    _verify_rules(fn, mesh, diags)
    for region in fn.regions:
        for block in region.blocks:
            _verify_block(block, mesh, diags)


def _verify_rules(fn, mesh, diags) -> None:
    """`mtf.layout_rules = {name = ["axis", ...]}` must name known axes, each at most once per rule."""
    if "mtf.layout_rules" not in fn.attributes:
        return
    try:
        rules = ir.DictAttr(fn.attributes["mtf.layout_rules"])
    except ValueError:
        diags.append(Diagnostic(fn.location, "'func.func' op mtf.layout_rules must be a dictionary {dim = [\"axis\", ...]}"))
        return
    for i in range(len(rules)):
        named = rules[i]
        try:
            axes = [ir.StringAttr(a).value for a in ir.ArrayAttr(named.attr)]
        except ValueError:
            diags.append(Diagnostic(fn.location, f"'func.func' op layout rule for '{named.name}' must be an array of axis names"))
            continue
        for axis in sorted({a for a in axes if axes.count(a) > 1}):
            diags.append(Diagnostic(fn.location, f"'func.func' op layout rule for '{named.name}' names mesh axis '{axis}' twice"))
        for axis in axes:
            if mesh is None or axis not in mesh.shape:
                known = mesh.format_axes() if mesh else "no mesh"
                diags.append(Diagnostic(fn.location, f"'func.func' op layout rule for '{named.name}' names unknown mesh axis '{axis}' ({known})"))


def _type_problem(t: ir.Type, mesh) -> str | None:
    if t.typeid != ir.OpaqueType.static_typeid or ir.OpaqueType(t).dialect_namespace != "mtf":
        return None
    try:
        check_type_on_mesh(TensorType.from_mlir(t), mesh)
    except (TypeSyntaxError, TypeContentError, VerifyError) as e:
        return str(e)
    return None


def _verify_region_ops(op, mesh, diags) -> None:
    name = op.name
    if name.startswith("mtf."):
        _verify_mtf_op(op, mesh, diags)
    for region in op.regions:
        for block in region.blocks:
            _verify_block(block, mesh, diags)


def _verify_block(block, mesh, diags) -> None:
    """Every op of the block; and the block must not end with an mtf op. MLIR's parser
    accepts that (an unregistered op might be a terminator), but no mtf op is one."""
    ops = [op.operation for op in block.operations]
    for op in ops:
        _verify_region_ops(op, mesh, diags)
    if ops and ops[-1].name.startswith("mtf."):
        diags.append(Diagnostic(ops[-1].location, f"'{ops[-1].name}' op cannot end a block: mtf ops are not terminators (is a 'return' missing?)"))


def _verify_mtf_op(op, mesh, diags) -> None:
    cls = OP_CLASSES.get(op.name)
    if cls is None:
        close = difflib.get_close_matches(op.name, OP_CLASSES, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        diags.append(Diagnostic(op.location, f"unknown operation '{op.name}'{hint}"))
        return
    view = op.opview
    try:
        view.verify(mesh)
    except VerifyError as e:
        diags.append(Diagnostic(op.location, f"'{op.name}' op {e}"))
    except (TypeSyntaxError, TypeContentError) as e:
        diags.append(Diagnostic(op.location, f"'{op.name}' op {e}"))
