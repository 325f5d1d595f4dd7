"""What upstream passes need of the IR before MeshIR hands it to them.

Some upstream passes in jaxlib 0.10.2 do not diagnose some inputs; they crash the process
instead: most `sdy-*` passes segfault on a function declaration (a `func.func` without a body),
Shardy's propagation and export abort with "Failed to lookup function: main" on a module
without a function named main or exactly one function (the propagation pipeline first drops
private functions no public one uses, so it counts only those that stay), Shardy's import aborts on a call to a
function outside the module it runs on, Shardy's propagation pipeline segfaults on a recursive
call (in a function symbol DCE keeps), `inline` and Shardy's propagation segfault on an
op of an unregistered dialect with a region, and Shardy's propagation, export and
explicit-reshard passes segfault on a sharding whose mesh is inlined (`mesh<[...]>`, which
jaxlib 0.12's export pipeline produces). MeshIR checks these preconditions in
a guard pass right before the upstream pass runs (earlier passes may have changed the IR) and
reports a located error instead (found by test/fuzz).
"""
from __future__ import annotations

import re

from meshir._jax_private import ir
from meshir.dialect.call_graph import recursion_message, recursive_call
from meshir.dialect.diagnostics import Diagnostic
from meshir.dialect.signature import function_name

from .pipeline_syntax import PipelineElement

BODIES = "every function has a body"
MAIN = "a function named main, or exactly one function"
LIVE_MAIN = "a function named main, or exactly one function, among those symbol DCE keeps"
REGISTERED_REGIONS = "no unregistered op with regions"
CALLEES = "every call's callee is a function of the module itself"
NO_RECURSION = "no function symbol DCE keeps reaches itself through calls"
NAMED_MESHES = "every Shardy sharding names its mesh (`@mesh`), none inlined (`mesh<[...]>`)"
_PROPAGATE = frozenset({BODIES, MAIN, REGISTERED_REGIONS, CALLEES, NAMED_MESHES})

#: What each upstream pass needs (seen crashing without it in jaxlib 0.10.2). An `sdy-*` pass
#: missing here is assumed to need everything; other upstream passes need nothing.
REQUIREMENTS: dict[str, frozenset[str]] = {
    "inline": frozenset({REGISTERED_REGIONS}),
    "sdy-propagation-pipeline": frozenset({BODIES, LIVE_MAIN, CALLEES, NO_RECURSION}),
    "sdy-import-pipeline": frozenset({BODIES, CALLEES}),
    "sdy-export-pipeline": frozenset({BODIES, MAIN, NAMED_MESHES}),
    "sdy-basic-propagate": _PROPAGATE,
    "sdy-aggressive-propagate": _PROPAGATE,
    "sdy-op-priority-propagate": _PROPAGATE,
    "sdy-user-priority-propagate": _PROPAGATE,
    **{name: frozenset({BODIES}) for name in (
        "sdy-add-data-flow-edges", "sdy-lift-inlined-meshes", "sdy-close-shardings",
        "sdy-sharding-constraint-to-reshard", "sdy-reshard-to-collectives", "sdy-drop-sharding-rules")},
    "sdy-insert-explicit-reshards": frozenset({BODIES, NAMED_MESHES}),
}


def requirements(name: str) -> frozenset[str]:
    if name in REQUIREMENTS:
        return REQUIREMENTS[name]
    return _PROPAGATE if name.startswith("sdy-") else frozenset()


def guarded_passes(element: PipelineElement, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """(anchor path, pass name) of every guarded pass in `element`; the path lists the op names
    of the nested pipelines around the pass (empty: it runs on the top-level module)."""
    if element.children is None:
        return [(path, element.name)] if requirements(element.name) else []
    inner = path + (element.name,)
    return [found for child in element.children for found in guarded_passes(child, inner)]


def guard_problems(module_op, passes: list[tuple[tuple[str, ...], str]]) -> list[Diagnostic]:
    """Located errors for every precondition of `passes` that `module_op` breaks."""
    diags: list[Diagnostic] = []
    for path, name in passes:
        needs = requirements(name)
        for target in _anchored(module_op.operation, path):
            if REGISTERED_REGIONS in needs:
                diags += _unregistered_region_ops(target, name)
            declarations = _declarations(target, name) if BODIES in needs else []
            diags += declarations
            if needs & {MAIN, LIVE_MAIN} and not declarations and target.name != "func.func":
                diags += _main_problem(target, name, live_only=LIVE_MAIN in needs)
            if CALLEES in needs and target.name != "func.func":
                diags += _foreign_callees(target, name)
            if NO_RECURSION in needs and target.name != "func.func":
                diags += _recursive_call(target, name)
            if NAMED_MESHES in needs:
                diags += _inlined_meshes(target, name)
    unique = {str(d): d for d in diags}  # a pass named twice reports once
    return list(unique.values())


def _anchored(top, path: tuple[str, ...]) -> list:
    """The ops a pass nested as `path` (op names, `any` for all) runs on, as MLIR nests them."""
    ops = [top]
    for name in path:
        ops = [child.operation for op in ops for region in op.regions for block in region.blocks
               for child in block.operations if name == "any" or child.operation.name == name]
    return ops


def _walk(target) -> list:
    """`target` and every op nested in it (without recursion: nesting may be deep)."""
    found, stack = [], [target]
    while stack:
        op = stack.pop()
        found.append(op)
        children = [child.operation for region in op.regions for block in region.blocks for child in block.operations]
        stack.extend(reversed(children))  # in textual order
    return found


def _functions(target) -> list:
    """The `func.func` ops directly in `target`."""
    return [op.operation for region in target.regions for block in region.blocks for op in block.operations
            if op.operation.name == "func.func"]


def _declarations(target, name: str) -> list[Diagnostic]:
    """An error for each function declaration at or under `target`."""
    return [
        Diagnostic(op.location, (
            f"'func.func' op @{function_name(op)} is a declaration (no body): Shardy pass '{name}' "
            f"needs every function to have a body; define @{function_name(op)} or remove it"))
        for op in _walk(target) if op.name == "func.func" and not len(op.regions[0].blocks)
    ]


def _foreign_callees(target, name: str) -> list[Diagnostic]:
    """An error for each call whose callee is not a function directly in `target` (MLIR finds
    it in the nearest symbol table; Shardy's import looks only in the module it runs on)."""
    own = {function_name(f) for f in _functions(target)}
    return [
        Diagnostic(op.location, (
            f"'func.call' op calls @{callee}, which is not a function of the '{target.name}' Shardy "
            f"pass '{name}' runs on (Shardy aborts on it; move the function there)"))
        for op in _walk(target) if op.name == "func.call"
        for callee in [ir.FlatSymbolRefAttr(op.attributes["callee"]).value] if callee not in own
    ]


def _recursive_call(target, name: str) -> list[Diagnostic]:
    """An error at a call that closes a cycle among the functions symbol DCE keeps."""
    cycle = recursive_call(target, [function_name(f) for f in _symbol_dce_survivors(_functions(target))])
    if cycle is None:
        return []
    call, names = cycle
    return [Diagnostic(call.location, recursion_message(names, f"Shardy pass '{name}' crashes on recursive calls"))]


_INLINED_MESH = re.compile(r"#sdy\.[\w]+<\[?<?mesh<")


def _inlined_meshes(target, name: str) -> list[Diagnostic]:
    """An error at the first op (or function) whose Shardy sharding inlines its mesh. Shardy's
    propagation, export and explicit-reshard passes segfault on one (jaxlib 0.10 to 0.12);
    jaxlib 0.12's `sdy-export-pipeline` ends by inlining every mesh, so a pass after it in
    the same pipeline meets them."""
    for op in _walk(target):
        for index in range(len(op.attributes)):  # by index: iteration yields names or pairs by version
            if _INLINED_MESH.search(str(op.attributes[index].attr)):
                return [Diagnostic(op.location, (
                    f"'{op.name}' op has a Shardy sharding with an inlined mesh (`mesh<[...]>`): Shardy pass "
                    f"'{name}' crashes on it; name the mesh with an `sdy.mesh` op, or run sdy-lift-inlined-meshes "
                    f"first (sdy-export-pipeline inlines meshes in jaxlib 0.12)"))]
    return []


def _unregistered_region_ops(target, name: str) -> list[Diagnostic]:
    """An error for each op of an unregistered dialect that has regions, at or under `target`."""
    context = target.context
    return [
        Diagnostic(op.location, (
            f"'{op.name}' op is unregistered and has regions: pass '{name}' cannot "
            f"run on it (it would crash)"))
        for op in _walk(target) if len(op.regions) and not context.is_registered_operation(op.name)
    ]


def _main_problem(target, name: str, live_only: bool) -> list[Diagnostic]:
    """Shardy's propagation takes the module's `main`, or its only function; anything else aborts.
    With `live_only`, only the functions that survive symbol DCE count (the pipeline's import
    drops the rest first)."""
    functions = _functions(target)
    if live_only:
        functions = _symbol_dce_survivors(functions)
    if len(functions) == 1 or any(function_name(f) == "main" for f in functions):
        return []
    counted = " public or used by a public function" if live_only else ""
    found = ", ".join("@" + function_name(f) for f in functions[:5]) or "none"
    return [Diagnostic(target.location, (
        f"Shardy pass '{name}' needs a function named @main or exactly one function{counted} in "
        f"this '{target.name}' (Shardy aborts otherwise); found {len(functions)}: {found}"))]


_SYMBOL_REFERENCE = re.compile(r"@([\w$.-]+|\"(?:[^\"\\]|\\.)*\")")


def _symbol_dce_survivors(functions: list) -> list:
    """The public functions and the private ones they reach through symbol references. Every
    `@name` in an attribute counts as a use, over-approximating MLIR's symbol uses, so a
    module is refused rather than handed to Shardy when in doubt."""
    by_name = {function_name(f): f for f in functions}
    live = [f for f in functions if _visibility(f) == "public"]
    seen = {function_name(f) for f in live}
    stack = list(live)
    while stack:
        for op in _walk(stack.pop()):
            for index in range(len(op.attributes)):  # by index: iteration yields names or pairs by version
                for used in _SYMBOL_REFERENCE.findall(str(op.attributes[index].attr)):
                    used = used.strip('"')
                    if used in by_name and used not in seen:
                        seen.add(used)
                        live.append(by_name[used])
                        stack.append(by_name[used])
    return [f for f in functions if function_name(f) in seen]


def _visibility(function) -> str:
    if "sym_visibility" not in function.attributes:
        return "public"
    return ir.StringAttr(function.attributes["sym_visibility"]).value
