"""PJRT compiles a module's `@main`; lowered functions keep their own names. `entry_text`
gives the text of a lowered module with the function to run renamed `main`."""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.signature import function_name, functions


def entry_text(module_op, function: str | None = None) -> str:
    """The module's text with `function` (default: the only function) named `@main`."""
    module_op = module_op.operation
    copy = ir.Module.parse(str(module_op), context=module_op.context)
    fns = functions(copy.operation)
    names = [function_name(f) for f in fns]
    if function is None:
        if len(fns) != 1:
            raise MeshIRError(f"the module has {len(fns)} functions ({', '.join('@' + n for n in names)}); say which one to run")
        function = names[0]
    if function not in names:
        raise MeshIRError(f"no function @{function} in the module (functions: {', '.join('@' + n for n in names) or 'none'})")
    if function != "main" and "main" in names:
        raise MeshIRError(f"cannot run @{function}: the module already has a @main")
    with copy.context:
        fns[names.index(function)].attributes["sym_name"] = ir.StringAttr.get("main")
    return str(copy)
