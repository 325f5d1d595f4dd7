"""The driver: lower every `mtf` function of a module to per-device StableHLO in place.

Steps: verify the module (MeshIR's verifier, then the partitioned form of
docs/partitioning.md), write each function's StableHLO text op by op with the rules of
the sibling modules, parse all of it in the module's context, swap the new functions in for
the old ones, and set `mhlo.num_partitions` / `mhlo.num_replicas`.
"""
from __future__ import annotations

import itertools

from meshir._jax_private import ir
from meshir.dialect.diagnostics import Diagnostic, MeshIRError, raise_diagnostics
from meshir.dialect.mesh import Mesh, function_mesh, module_meshes
from meshir.dialect.signature import NAME_ATTR, function_name, functions, signature
from meshir.dialect.verifier import check_module
from meshir.transforms.partitioned import verify_partitioned

from . import collectives, contraction, creation, elementwise, indexing, random, shape
from .builder import Builder
from .context import Program, op_error
from .function import Signature, block_arguments, function_text

RULES = {
    **elementwise.RULES,
    **contraction.RULES,
    **shape.RULES,
    **creation.RULES,
    **random.RULES,
    **indexing.RULES,
    **collectives.RULES,
}
MODES = ("explicit", "gspmd")


def lower_module(module_op, mode: str = "explicit") -> None:
    """Replace each `mtf` function of `module_op` by its StableHLO; raise MeshIRError."""
    if mode != "explicit":
        raise MeshIRError(f"mode '{mode}' is not implemented yet (use mode=explicit)")
    module_op = module_op.operation
    check_module(module_op)
    raise_diagnostics(verify_partitioned(module_op))
    meshes = module_meshes(module_op)
    targets = [fn for fn in functions(module_op) if _is_mtf_function(fn)]
    lowered = [(fn, function_mesh(fn, meshes)) for fn in targets]
    partitions = _num_partitions(module_op, lowered)
    channels = itertools.count(1)
    texts = [lower_function(fn, mesh, channels) for fn, mesh in lowered]
    _swap_functions(module_op, targets, meshes, texts)
    with module_op.context:
        i32 = ir.IntegerType.get_signless(32)
        module_op.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, partitions)
        module_op.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)


def lower_function(fn, mesh: Mesh | None, channels) -> str:
    """The StableHLO text of one function."""
    sig = _signature(fn)
    for i, t in enumerate(sig.arg_types):
        if t.partial:
            raise op_error(fn, f"argument #{i} is pending ({t}); arguments must be complete values")
    b = Builder(channels)
    program = Program(b, mesh)
    block = fn.regions[0].blocks[0]
    args = block_arguments(sig, mesh, b.fresh)
    program.values.update(zip(block.arguments, args))
    for op in block.operations:
        name = op.operation.name
        if name == "func.return":
            results = program.operands(op)
            break
        b.location = str(op.location)
        rule = RULES.get(name)
        if rule is None:
            raise op_error(op, "cannot be lowered to StableHLO (mtf-lower-to-stablehlo knows mtf ops only)")
        if mesh is None and name in collectives.RULES:
            raise op_error(op, "is a collective but the function has no mesh")
        program.values[op.operation.results[0]] = rule(program, op)
    else:
        raise op_error(fn, "has no func.return")
    body = ["    " + line for line in b.lines]
    return function_text(sig, mesh, args, body, results)


def _is_mtf_function(fn) -> bool:
    fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    types = list(fn_type.inputs) + list(fn_type.results)
    if any(t.typeid == ir.OpaqueType.static_typeid and ir.OpaqueType(t).dialect_namespace == "mtf" for t in types):
        return True
    return any(op.operation.name.startswith("mtf.") for op in fn.regions[0].blocks[0].operations)


def _names(fn, attr: str, count: int) -> tuple[str | None, ...]:
    if attr not in fn.attributes:
        return (None,) * count
    dicts = [ir.DictAttr(a) for a in ir.ArrayAttr(fn.attributes[attr])]
    return tuple(ir.StringAttr(d[NAME_ATTR]).value if NAME_ATTR in d else None for d in dicts)


def _signature(fn) -> Signature:
    """Types from the dialect's signature; names only where `mtf.name` gives one."""
    sig = signature(fn)
    return Signature(
        sig.function, sig.arg_types, sig.result_types,
        _names(fn, "arg_attrs", len(sig.arg_types)),
        _names(fn, "res_attrs", len(sig.result_types)),
    )


def _num_partitions(module_op, lowered) -> int:
    sizes = {mesh.size if mesh is not None else 1 for _, mesh in lowered}
    if len(sizes) > 1:
        detail = ", ".join(f"@{function_name(fn)}: {mesh.size if mesh else 1}" for fn, mesh in lowered)
        diag = Diagnostic(module_op.location, f"functions run on meshes of different device counts ({detail}); "
                          "one StableHLO module has one number of partitions")
        raise MeshIRError(str(diag), [diag])
    return sizes.pop() if sizes else 1


def _swap_functions(module_op, old_fns, meshes, texts) -> None:
    """Parse the new functions (beside copies of the meshes they name) and put each in the
    place of the function it lowers."""
    text = "\n".join([m.to_mlir_text() for m in meshes.values()] + texts)
    try:
        parsed = ir.Module.parse(text, context=module_op.context)
    except ir.MLIRError as e:  # a lowering bug, not the user's: show what was generated
        raise RuntimeError(f"mtf-lower-to-stablehlo generated invalid StableHLO: {e}\n{text}") from None
    new_fns = [op for op in parsed.body.operations if op.operation.name == "func.func"]
    for old, new in zip(old_fns, new_fns):
        new.operation.move_before(old.operation)
        old.operation.erase()
