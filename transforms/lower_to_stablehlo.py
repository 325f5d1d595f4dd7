"""`mtf-lower-to-stablehlo`: `mtf` functions in partitioned form to StableHLO (DESIGN.md §3.3).

The work is done by `meshir.lowering.stablehlo`; this file registers the pass and its option.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .registry import ModulePass, option, register_pass


@register_pass
@dataclass
class LowerToStableHLOPass(ModulePass):
    NAME = "mtf-lower-to-stablehlo"
    SUMMARY = "Lower partitioned mtf functions to StableHLO with Shardy shardings"
    mode: Literal["explicit", "gspmd"] = option(
        "explicit",
        "explicit: per-device StableHLO in sdy.manual_computation with collectives; "
        "gspmd: global StableHLO for XLA's partitioner (not implemented yet)",
    )

    def apply(self, module_op) -> None:
        # Imported here: the lowering uses meshir.transforms (the partitioned verifier).
        from meshir.lowering.stablehlo import lower_module

        lower_module(module_op, self.mode)
