"""A compiled MeshIR program as jax sees a function it exported: a `jax.export.Exported`.

jax embeds an Exported into whatever it lowers around it (`Exported.call` inside `jax.jit`
becomes a `func.call` of the module's functions, merged into the caller's module) and
serializes it (`Exported.serialize`). The module is the one the Executable compiled, entry
`@main`, without donation marks (inside jax.jit, donation is the caller's `donate_argnums`).
Its arguments and results keep their Shardy shardings, so jax reshards at the boundary what
the caller laid out otherwise; each also carries `mtf.type` (its MeshIR type: dim names and
layout), from which `mi.load` rebuilds the signature.
"""
from __future__ import annotations

import jax
from jax.sharding import AxisType, NamedSharding

from meshir import _jax_private as jp
from meshir._jax_private import ir
from meshir.dialect import attribute_names
from meshir.dialect.context import get_context

#: The module attribute naming what wrote an export (read back in `mi.load`'s errors).
WRITER_ATTRIBUTE = "mtf.exported_by"
#: The attribute of `@main` naming the function it was (calls and errors name it so).
FUNCTION_ATTRIBUTE = "mtf.function"


def writer() -> str:
    """Who writes an export: MeshIR's and jax's versions."""
    from importlib.metadata import version

    return f"meshir {version('meshir')}, jax {jax.__version__}"


def export_text(exe) -> str:
    """The module `exe` runs, as exports carry it: entry `@main` (its own name in
    `mtf.function`) with `mtf.name` and `mtf.type` on each argument and result, and the
    writer's versions."""
    sig = exe.signature
    with get_context() as ctx:
        module = ir.Module.parse(exe._entry.exportable, context=ctx)
        main = next(op for op in module.body.operations
                    if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main")
        for attr_name, names, types in (("arg_attrs", sig.arg_names, sig.arg_types),
                                        ("res_attrs", sig.result_names, sig.result_types)):
            entries = [dict(_entries(d)) for d in ir.ArrayAttr(main.attributes[attr_name])] if attr_name in main.attributes \
                else [{} for _ in names]
            for entry, name, t in zip(entries, names, types):
                entry[attribute_names.NAME] = ir.StringAttr.get(name)
                entry[attribute_names.TYPE] = ir.StringAttr.get(str(t))
            main.attributes[attr_name] = ir.ArrayAttr.get([ir.DictAttr.get(e) for e in entries])
        main.attributes[FUNCTION_ATTRIBUTE] = ir.StringAttr.get(sig.function)
        module.operation.attributes[WRITER_ATTRIBUTE] = ir.StringAttr.get(writer())
        return str(module)


def _entries(attr) -> list:
    d = ir.DictAttr(attr)
    return [(d[i].name, d[i].attr) for i in range(len(d))]


def exported(exe, axis_types: tuple[str, ...] | None = None) -> jax.export.Exported:
    """`exe` as a `jax.export.Exported`: positional arguments in the signature's order, the
    results as a tuple; shardings on the abstract form of `exe`'s mesh (so any devices of
    that shape run it) with `axis_types` (None: Auto, what calls inside jax use; a file
    records the program's, which jax's `in_shardings_jax(mesh)` compares with `mesh`'s);
    no VJP of its own (`in_jax.py` differentiates with MeshIR's)."""
    sig, mesh = exe.signature, _abstract_mesh(exe, axis_types)
    in_shardings = tuple(NamedSharding(mesh, s.spec) for s in exe.in_shardings)
    out_shardings = tuple(NamedSharding(mesh, s.spec) for s in exe.out_shardings)
    # avals typed by their shardings on Explicit axes (`f32[8@x,16]`), as jax's own exports
    in_avals = tuple(jp.abstract_array(t.shape, t.dtype, s if axis_types else None)
                     for t, s in zip(sig.arg_types, in_shardings))
    out_avals = tuple(jp.abstract_array(t.shape, t.dtype, s if axis_types else None)
                      for t, s in zip(sig.result_types, out_shardings))
    return jp.make_exported(
        fun_name=sig.function,
        in_tree=jax.tree_util.tree_structure((tuple(range(len(in_avals))), {})),
        in_avals=in_avals,
        out_tree=jax.tree_util.tree_structure(tuple(range(len(out_avals)))),
        out_avals=out_avals,
        has_named_shardings=True,
        in_named_shardings=in_shardings,
        out_named_shardings=out_shardings,
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=len(exe.devices),
        platforms=(jp.export_platform(exe.devices[0]),),
        ordered_effects=(),
        unordered_effects=(),
        disabled_safety_checks=(),
        mlir_module_serialized=jp.portable_artifact(export_text(exe)),
        calling_convention_version=jax.config.jax_export_calling_convention_version,
        module_kept_var_idx=tuple(range(len(in_avals))),
        uses_global_constants=False,
        get_vjp=None,
    )


def _abstract_mesh(exe, axis_types):
    """The abstract mesh of `exe`'s devices with jax's axis types named by `axis_types`."""
    if axis_types is None:
        return exe.jax_mesh.abstract_mesh
    types = tuple(AxisType.Explicit if t == "explicit" else AxisType.Auto for t in axis_types)
    return jax.sharding.Mesh(exe.jax_mesh.devices, exe.jax_mesh.axis_names, axis_types=types).abstract_mesh
