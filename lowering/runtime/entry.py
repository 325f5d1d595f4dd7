"""The StableHLO module an Executable runs: its entry `@main`, checked against the signature.

PJRT trusts whatever buffers it is given, so a module whose entry disagrees with the
signature the runtime places arguments by would compute garbage, or wait forever in a
collective. Shapes and element types are compared here, before compiling; the compiled
shardings are compared by `executable.py` once PJRT has read them.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.context import parse_module
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.mesh import Mesh
from meshir.dialect.signature import FunctionSignature, function_name, functions

from .donation import mark_aliasing
from .single_device import inline_manual_computations


@dataclass(frozen=True)
class EntryModule:
    """`text`: the module with the function to run named `@main` (what users read);
    `computation`: the bytecode handed to PJRT (for one-device meshes with the manual
    computations inlined, see single_device.py); `exportable`: `text` without donation
    marks (what `mi.export` writes and jax.jit embeds: donation there is the caller's), its
    manual computations inlined too on a one-device mesh."""

    text: str
    computation: bytes
    exportable: str


def prepare_entry(module, signature: FunctionSignature, mesh: Mesh, aliases: dict[int, int] | None = None) -> EntryModule:
    """Check `module` (text, ir.Module or module op) against `signature`; MeshIRError if not.
    `aliases` (argument index -> result index, see donation.py) marks donated arguments."""
    # Imported here: the lowering package pulls in the passes, which the runtime (and the
    # test conftest importing ensure_cpu_devices) should not need just to be imported.
    from meshir.lowering.stablehlo.entry import entry_text

    module_op = _module_op(module)
    names = [function_name(f) for f in functions(module_op)]
    entry = signature.function if signature.function in names else "main" if "main" in names else None
    text = entry_text(module_op, entry)
    copy = ir.Module.parse(text, context=module_op.context)
    main = next(f for f in functions(copy.operation) if function_name(f) == "main")
    _check_types(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value), signature)
    exportable = text if mesh.size != 1 else _inlined(text, module_op.context)
    if aliases:
        mark_aliasing(main, aliases)
        text = str(copy)
    if mesh.size == 1:
        inline_manual_computations(copy.operation)
    buffer = io.BytesIO()
    copy.operation.write_bytecode(buffer)
    return EntryModule(text, buffer.getvalue(), exportable)


def _inlined(text: str, context) -> str:
    """`text` with its manual computations inlined (a one-device mesh, single_device.py)."""
    copy = ir.Module.parse(text, context=context)
    inline_manual_computations(copy.operation)
    return str(copy)


def _module_op(module):
    if isinstance(module, str):
        module_op, diagnostics = parse_module(module, source_name="stablehlo")
        if module_op is None:
            raise MeshIRError("cannot parse the StableHLO module:\n" + "\n".join(map(str, diagnostics)), diagnostics)
        return module_op
    return module.operation


def _check_types(fn_type: ir.FunctionType, sig: FunctionSignature) -> None:
    """Same number of arguments and results, each of the signature's global shape and type."""
    for kind, types, names, expected in (
        ("argument", fn_type.inputs, sig.arg_names, sig.arg_types),
        ("result", fn_type.results, sig.result_names, sig.result_types),
    ):
        if len(types) != len(expected):
            raise MeshIRError(
                f"the StableHLO entry has {len(types)} {kind}s but @{sig.function} has {len(expected)} "
                f"({', '.join(names) or 'none'})"
            )
        for t, name, want in zip(types, names, expected):
            if _global_form(t) != (want.shape, want.element_type):
                raise MeshIRError(
                    f"{kind} '{name}' of @{sig.function}: the StableHLO entry has {t}, but the signature "
                    f"says {want} (global shape {list(want.shape)}, {want.element_type})"
                )


def _global_form(t: ir.Type) -> tuple[tuple[int, ...], str] | None:
    try:
        ranked = ir.RankedTensorType(t)
    except ValueError:
        return None
    return tuple(ranked.shape), str(ranked.element_type)

