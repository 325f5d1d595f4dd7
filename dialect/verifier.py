"""Verify a module: MLIR's structural checks, then every `mtf` op's own rules and every
`!mtf.tensor` type against its function's mesh. Returns diagnostics located at the ops."""
from __future__ import annotations

import difflib

from meshir._jax_private import ir
from .attribute_names import LAYOUT_RULES

from .diagnostics import Diagnostic, MeshIRError, MeshIRTypeError, VerifyError, raise_diagnostics
from .mesh import Mesh, function_mesh, module_meshes
from .ops.base import OP_CLASSES, check_type_on_mesh
from .signature import NAME_ATTR
from .tensor_type import TensorType, TypeContentError, TypeSyntaxError
from .verdicts import Verdicts
from .walk import named_attributes
from .context import mlir_error_diagnostics


def verify_module(module) -> list[Diagnostic]:
    """All diagnostics for `module` (a builtin.module op or ir.Module); empty when it is valid."""
    module_op = getattr(module, "operation", None)
    if module_op is None:
        raise MeshIRTypeError(f"expected a builtin.module op or an ir.Module, got {type(module).__name__} {module!r:.60}")
    try:
        module_op.verify()
    except ir.MLIRError as e:
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
    except MeshIRError as e:  # located at the sdy.mesh op
        diags += e.diagnostics or [Diagnostic(module_op.location, str(e))]
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
    _verify_names(fn, diags)
    _verify_region_ops(fn.operation, mesh, diags, signature_checked=True)


def _verify_names(fn, diags) -> None:
    """`mtf.name` on an argument or result is a string (the runtime binds inputs by it)."""
    for kind, attr in (("argument", "arg_attrs"), ("result", "res_attrs")):
        if attr not in fn.attributes:
            continue
        try:
            entries = list(ir.ArrayAttr(fn.attributes[attr]))
        except ValueError:
            continue  # MLIR's own verifier checks the shape of arg_attrs/res_attrs
        for i, entry in enumerate(entries):
            try:
                entry = ir.DictAttr(entry)
            except ValueError:
                continue
            name = entry[NAME_ATTR] if NAME_ATTR in entry else None
            if name is not None and not _is_string(name):
                diags.append(Diagnostic(fn.location, f"'func.func' op {kind} #{i}: {NAME_ATTR} must be a string, "
                                        f"got {name}"))


def _is_string(attr) -> bool:
    try:
        ir.StringAttr(attr)
        return True
    except ValueError:
        return False


def _verify_rules(fn, mesh, diags) -> None:
    """`mtf.layout_rules = {name = ["axis", ...]}` must name known axes, each at most once per rule."""
    if LAYOUT_RULES not in fn.attributes:
        return
    try:
        rules = ir.DictAttr(fn.attributes[LAYOUT_RULES])
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
    """Why `t` (or an `!mtf.tensor` inside a tuple or function type) is invalid on `mesh`."""
    for inner in _nested_types(t):
        if inner.typeid != ir.OpaqueType.static_typeid or ir.OpaqueType(inner).dialect_namespace != "mtf":
            continue
        try:
            check_type_on_mesh(TensorType.from_mlir(inner), mesh)
        except (TypeSyntaxError, TypeContentError, VerifyError) as e:
            return str(e)
    return None


def _nested_types(t: ir.Type) -> list[ir.Type]:
    """`t` and the types inside it (tuple elements, function inputs and results)."""
    found, stack = [], [t]
    while stack:
        t = stack.pop()
        found.append(t)
        if t.typeid == ir.TupleType.static_typeid:
            tup = ir.TupleType(t)
            stack.extend(tup.get_type(i) for i in range(tup.num_types))
        elif t.typeid == ir.FunctionType.static_typeid:
            fn_type = ir.FunctionType(t)
            stack.extend(list(fn_type.inputs) + list(fn_type.results))
    return found


def _verify_region_ops(root, mesh, diags, signature_checked: bool = False) -> None:
    """Verify `root` and every op nested in it, with a worklist: nesting depth is bounded by
    nesting.MAX_NESTING, not by Python's recursion limit. `signature_checked`: `root` is a
    function whose signature _verify_function checked already."""
    work = [root]
    while work:
        op = work.pop()
        if op.name.startswith("mtf."):
            _verify_mtf_op(op, mesh, diags)
        else:
            _verify_foreign_types(op, mesh, diags, skip_signature=signature_checked and op is root)
        for r, region in enumerate(op.regions):
            for b, block in enumerate(region.blocks):
                if op.name != "func.func" or b:  # a function's entry block arguments are its signature
                    _verify_block_arguments(op, r, b, block, mesh, diags)
                ops = [child.operation for child in block.operations]
                if ops and ops[-1].name.startswith("mtf.") and not getattr(OP_CLASSES.get(ops[-1].name), "TERMINATOR", False):
                    # MLIR's parser accepts this (an unregistered op might be a terminator); no mtf op is one.
                    diags.append(Diagnostic(ops[-1].location, f"'{ops[-1].name}' op cannot end a block: mtf ops are not terminators (is a 'return' missing?)"))
                work.extend(reversed(ops))


def _verify_foreign_types(op, mesh, diags, skip_signature: bool = False) -> None:
    """`!mtf.tensor` types on an op of another dialect: its results and type attributes."""
    for i, result in enumerate(op.results):
        problem = _type_problem(result.type, mesh)
        if problem:
            diags.append(Diagnostic(op.location, f"'{op.name}' op result #{i}: {problem}"))
    for name, value in named_attributes(op):
        if skip_signature and name == "function_type":
            continue
        for attr in _nested_attributes(value):
            if isinstance(attr, ir.TypeAttr):
                problem = _type_problem(ir.TypeAttr(attr).value, mesh)
                if problem:
                    diags.append(Diagnostic(op.location, f"'{op.name}' op attribute '{name}': {problem}"))


def _nested_attributes(attr) -> list:
    """`attr` and the attributes inside it (array elements, dictionary values)."""
    found, stack = [], [attr]
    while stack:
        attr = stack.pop()
        found.append(attr)
        if isinstance(attr, ir.ArrayAttr):
            stack.extend(attr)
        elif isinstance(attr, ir.DictAttr):
            stack.extend(attr[i].attr for i in range(len(attr)))
    return found


def _verify_block_arguments(op, r: int, b: int, block, mesh, diags) -> None:
    for i, arg in enumerate(block.arguments):
        problem = _type_problem(arg.type, mesh)
        if problem:
            diags.append(Diagnostic(op.location, f"'{op.name}' op region #{r} block #{b} argument #{i}: {problem}"))


def _verify_mtf_op(op, mesh, diags) -> None:
    cls = OP_CLASSES.get(op.name)
    if cls is None:
        close = difflib.get_close_matches(op.name, OP_CLASSES, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        diags.append(Diagnostic(op.location, f"unknown operation '{op.name}'{hint}"))
        return
    problem = _op_problem(op, mesh)
    if problem is not None:
        diags.append(Diagnostic(op.location, f"'{op.name}' op {problem}"))


def _check_op(op, mesh) -> str | None:
    try:
        op.opview.verify(mesh)
    except (VerifyError, TypeSyntaxError, TypeContentError) as e:
        return str(e)
    return None


_op_problem = Verdicts(_check_op, reads_only_itself=lambda op: OP_CLASSES[op.name].VERIFY_READS_ONLY_ITSELF)
