"""`mtf-lower-to-stablehlo`: `mtf` functions to StableHLO: partitioned form
to per-device programs (explicit mode), or propagated form to global programs (gspmd mode).

The work is done by `meshir.lowering.stablehlo`; this file registers the pass and its option.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.diagnostics import Diagnostic, raise_diagnostics
from meshir.dialect.modes import EXPLICIT, Mode
from meshir.dialect.signature import function_name, functions, is_mtf_function
from meshir.lowering.stablehlo import lower_module
from meshir.lowering.stablehlo.gspmd import verify_global

from .insert_collectives import PARTITIONED
from ..infra.registry import IRForm, ModulePass, option, register_pass


#: What gspmd mode needs: every dim laid out (propagated IR), no pending argument or result.
GLOBAL = IRForm("global", verify_global)


@register_pass
@dataclass
class LowerToStableHLOPass(ModulePass):
    NAME = "mtf-lower-to-stablehlo"
    SUMMARY = "Lower mtf functions to StableHLO with Shardy shardings"
    mode: Mode = option(
        EXPLICIT,
        "explicit: per-device StableHLO in sdy.manual_computation with collectives (input: "
        "after mtf-insert-collectives); gspmd: global StableHLO with sdy.sharding_constraint on "
        "the propagated layouts, partitioned by XLA's Shardy (input: after mtf-propagate-sharding)",
    )

    narrow_dots: bool = option(True, "bf16/f16 dot operands stay narrow with an f32 result (GPU, TPU); false: "
                               "converted to f32 first (mi.compile's choice for XLA:CPU)")

    def input_form(self) -> IRForm:
        """Explicit mode lowers the partitioned form, gspmd mode the propagated (global) one;
        the pass manager checks it unless the pass before produced it."""
        return PARTITIONED if self.mode == EXPLICIT else GLOBAL

    def apply(self, module_op) -> None:
        raise_diagnostics(_mtf_declarations(module_op))
        lower_module(module_op, self.mode, verified=True, narrow_dots=self.narrow_dots)


def _mtf_declarations(module_op) -> list[Diagnostic]:
    """A declaration with `!mtf.tensor` types has no body to lower, and left as it is the
    output would not be StableHLO: refuse it, located (docs/decisions.md)."""
    return [
        Diagnostic(fn.location, f"'func.func' op @{function_name(fn)} is a declaration with !mtf.tensor types: "
                                f"{LowerToStableHLOPass.NAME} lowers function bodies; define @{function_name(fn)} or remove it")
        for fn in functions(module_op)
        if not len(fn.regions[0].blocks) and is_mtf_function(fn)
    ]
