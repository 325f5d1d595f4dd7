"""What upstream Shardy passes need of the IR before MeshIR hands it to them.

Shardy's passes in jaxlib 0.10.2 do not diagnose some inputs; they crash the process instead:
most `sdy-*` passes segfault on a function declaration (a `func.func` without a body), and the
propagation and export passes abort with "Failed to lookup function: main" on a module without
a defined function. MeshIR checks these preconditions in a guard pass right before the Shardy
pass runs (earlier passes may have changed the IR) and reports a located error instead.
"""
from __future__ import annotations

from meshir.dialect.diagnostics import Diagnostic
from meshir.dialect.signature import function_name

from .pipeline_syntax import PipelineElement

#: Shardy passes that abort on a module without any function that has a body.
NEEDS_A_DEFINED_FUNCTION = frozenset({
    "sdy-propagation-pipeline",
    "sdy-export-pipeline",
    "sdy-basic-propagate",
    "sdy-aggressive-propagate",
    "sdy-op-priority-propagate",
    "sdy-user-priority-propagate",
})
#: Shardy passes seen to work on an empty module; any other `sdy-*` pass is assumed to need a function.
SAFE_ON_EMPTY_MODULE = frozenset({
    "sdy-import-pipeline",
    "sdy-add-data-flow-edges",
    "sdy-lift-inlined-meshes",
    "sdy-close-shardings",
    "sdy-sharding-constraint-to-reshard",
    "sdy-insert-explicit-reshards",
    "sdy-reshard-to-collectives",
    "sdy-drop-sharding-rules",
})


def is_shardy_pass(name: str) -> bool:
    return name.startswith("sdy-")


def guarded_passes(element: PipelineElement, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """(anchor path, pass name) of every Shardy pass in `element`; the path lists the op names
    of the nested pipelines around the pass (empty: it runs on the top-level module)."""
    if element.children is None:
        return [(path, element.name)] if is_shardy_pass(element.name) else []
    inner = path + (element.name,)
    return [found for child in element.children for found in guarded_passes(child, inner)]


def guard_problems(module_op, passes: list[tuple[tuple[str, ...], str]]) -> list[Diagnostic]:
    """Located errors for every precondition of `passes` that `module_op` breaks."""
    diags: list[Diagnostic] = []
    for path, name in passes:
        for target in _anchored(module_op.operation, path):
            declarations = _declarations(target, name)
            diags += declarations
            if declarations or target.name == "func.func":
                continue
            if _needs_function(name) and not _has_defined_function(target):
                diags.append(Diagnostic(target.location, (
                    f"Shardy pass '{name}' needs a function with a body in this '{target.name}' "
                    f"(Shardy aborts on a module without one)")))
    unique = {str(d): d for d in diags}  # a pass named twice reports once
    return list(unique.values())


def _needs_function(name: str) -> bool:
    return name in NEEDS_A_DEFINED_FUNCTION or name not in SAFE_ON_EMPTY_MODULE


def _anchored(top, path: tuple[str, ...]) -> list:
    """The ops a pass nested as `path` (op names, `any` for all) runs on, as MLIR nests them."""
    ops = [top]
    for name in path:
        ops = [child.operation for op in ops for region in op.regions for block in region.blocks
               for child in block.operations if name == "any" or child.operation.name == name]
    return ops


def _declarations(target, name: str) -> list[Diagnostic]:
    """An error for each function declaration at or under `target` (walked without recursion)."""
    diags, stack = [], [target]
    while stack:
        op = stack.pop()
        if op.name == "func.func" and not len(op.regions[0].blocks):
            symbol = function_name(op)
            diags.append(Diagnostic(op.location, (
                f"'func.func' op @{symbol} is a declaration (no body): Shardy pass '{name}' "
                f"needs every function to have a body; define @{symbol} or remove it")))
        stack.extend(child.operation for region in op.regions for block in region.blocks for child in block.operations)
    return diags


def _has_defined_function(target) -> bool:
    return any(op.operation.name == "func.func" and len(op.operation.regions[0].blocks)
               for region in target.regions for block in region.blocks for op in block.operations)
