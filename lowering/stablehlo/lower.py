"""The driver: lower every `mtf` function of a module to StableHLO in place.

Steps: verify the module (MeshIR's verifier, then the partitioned form of
docs/partitioning.md in explicit mode, or gspmd.py's input check), write each function's
StableHLO text op by op with the rules the sibling modules register by op class in
dialect/op_registry.py (per device in explicit mode, on global values in gspmd mode), parse
all of it in the module's context, swap the new functions in for the old ones, and set
`mhlo.num_partitions` / `mhlo.num_replicas`.

Which rule lowers an op: in explicit mode, and in a function without a mesh, its "lower"
rule (a special form first when its condition holds); in gspmd mode on a mesh, its
"lower_global" rule where it has one. Without a mesh a collective is an error (a shard is
the identity there, in both modes).
"""
from __future__ import annotations

import itertools

from meshir._jax_private import ir
from meshir.dialect.diagnostics import located_error, raise_diagnostics
from meshir.dialect.mesh import Mesh, function_mesh, module_meshes
from meshir.dialect.modes import EXPLICIT, GSPMD, MODES, check_mode  # noqa: F401  (MODES: re-exported)
from meshir.dialect.op_registry import lookup
from meshir.dialect.ops import is_collective
from meshir.dialect.partitioned import verify_partitioned
from meshir.dialect.signature import function_name, functions, is_mtf_function
from meshir.dialect.verifier import check_module

from . import gspmd
from .builder import Builder
from .context import FunctionLowering, op_error
from .function import block_arguments, function_signature, function_text


def lower_module(module_op, mode: str = EXPLICIT, *, verified: bool = False, narrow_dots: bool = True) -> None:
    """Replace each `mtf` function of `module_op` by its StableHLO; raise MeshIRError.

    `mode`: "explicit" (partitioned input, per-device programs) or "gspmd" (propagated input,
    global programs with sharding constraints, see gspmd.py). `verified`: the caller (the
    pass manager) has verified the module and checked its input form; called alone, the
    lowering checks both itself. `narrow_dots`: see Builder."""
    check_mode(mode)
    module_op = module_op.operation
    if not verified:
        check_module(module_op)
        raise_diagnostics(verify_partitioned(module_op) if mode == EXPLICIT else gspmd.verify_global(module_op))
    meshes = module_meshes(module_op)
    targets = [fn for fn in functions(module_op) if is_mtf_function(fn)]
    lowered = [(fn, function_mesh(fn, meshes)) for fn in targets]
    partitions = _num_partitions(module_op, lowered)
    channels = itertools.count(1)
    texts = [lower_function(fn, mesh, channels, mode, narrow_dots) for fn, mesh in lowered]
    _swap_functions(module_op, targets, meshes, texts)
    with module_op.context:
        i32 = ir.IntegerType.get_signless(32)
        module_op.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, partitions)
        module_op.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)


def lower_function(fn, mesh: Mesh | None, channels, mode: str = EXPLICIT, narrow_dots: bool = True) -> str:
    """The StableHLO text of one function: in explicit mode a per-device program in a manual
    computation, in gspmd mode a global program with sharding constraints."""
    sig = function_signature(fn)
    for i, t in enumerate(sig.arg_types):
        if t.partial:
            raise op_error(fn, f"argument #{i} is pending ({t}); arguments must be complete values")
    b = Builder(channels, narrow_dots)
    manual = mode == EXPLICIT and mesh is not None
    args = block_arguments(sig, mesh if manual else None, b.fresh)
    after = None
    if mesh is None:
        rule_for = _rule_without_mesh
    elif mode == GSPMD:
        rule_for, after = _global_rule, gspmd.Constraints(b, mesh, sig.arg_types, args)
    else:
        rule_for = _rule
    program = FunctionLowering(b, mesh if manual else None, rule_for, after)
    program.values.update(zip(fn.regions[0].blocks[0].arguments, args))
    results = program.lower_block(fn.regions[0].blocks[0])
    body = ["    " + line for line in b.lines]
    return function_text(sig, mesh, args, body, results, manual=manual)


def _rule(op):
    """Explicit mode on a mesh: the op's "lower" rule (a special form whose condition holds first)."""
    return lookup("lower", op)


def _global_rule(op):
    """gspmd mode on a mesh: the op's "lower_global" rule where it has one, else its "lower" rule."""
    return lookup("lower_global", op) or lookup("lower", op)


def _rule_without_mesh(op):
    """A function without a mesh, in either mode: the "lower" rules; a collective has no
    devices to exchange with."""
    return _needs_mesh if is_collective(op) else lookup("lower", op)


def _needs_mesh(p: FunctionLowering, op):
    raise op_error(op, "is a collective but the function has no mesh")


def _num_partitions(module_op, lowered) -> int:
    sizes = {mesh.size if mesh is not None else 1 for _, mesh in lowered}
    if len(sizes) > 1:
        detail = ", ".join(f"@{function_name(fn)}: {mesh.size if mesh else 1}" for fn, mesh in lowered)
        raise located_error(module_op.location, f"functions run on meshes of different device counts ({detail}); "
                            "one StableHLO module has one number of partitions")
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
