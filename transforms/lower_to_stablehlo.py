"""`mtf-lower-to-stablehlo`: `mtf` functions to StableHLO: partitioned form
to per-device programs (explicit mode), or propagated form to global programs (gspmd mode).

The work is done by `meshir.lowering.stablehlo`; this file registers the pass and its option.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from meshir.dialect.diagnostics import Diagnostic, raise_diagnostics
from meshir.dialect.signature import function_name, functions, is_mtf_function

from .registry import ModulePass, option, register_pass


@register_pass
@dataclass
class LowerToStableHLOPass(ModulePass):
    NAME = "mtf-lower-to-stablehlo"
    SUMMARY = "Lower mtf functions to StableHLO with Shardy shardings"
    mode: Literal["explicit", "gspmd"] = option(
        "explicit",
        "explicit: per-device StableHLO in sdy.manual_computation with collectives (input: "
        "after mtf-insert-collectives); gspmd: global StableHLO with sdy.sharding_constraint on "
        "the propagated layouts, partitioned by XLA's Shardy (input: after mtf-propagate-sharding)",
    )

    def apply(self, module_op) -> None:
        # Imported here: the lowering uses meshir.transforms (the partitioned verifier).
        from meshir.lowering.stablehlo import lower_module

        raise_diagnostics(_mtf_declarations(module_op))
        lower_module(module_op, self.mode)


def _mtf_declarations(module_op) -> list[Diagnostic]:
    """A declaration with `!mtf.tensor` types has no body to lower, and left as it is the
    output would not be StableHLO: refuse it, located (docs/decisions.md)."""
    return [
        Diagnostic(fn.location, f"'func.func' op @{function_name(fn)} is a declaration with !mtf.tensor types: "
                                f"{LowerToStableHLOPass.NAME} lowers function bodies; define @{function_name(fn)} or remove it")
        for fn in functions(module_op)
        if not len(fn.regions[0].blocks) and is_mtf_function(fn)
    ]
