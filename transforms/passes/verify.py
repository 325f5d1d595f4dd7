"""`mtf-verify`: run the MeshIR verifier in the middle of a pipeline.

meshir-opt verifies after parsing and after the pipeline; this pass lets a pipeline check
the IR between two passes, and is the smallest real user of the pass registry.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.diagnostics import raise_diagnostics
from meshir.dialect.verifier import verify_module

from ..infra.registry import ModulePass, register_pass


@register_pass
@dataclass
class VerifyPass(ModulePass):
    NAME = "mtf-verify"
    SUMMARY = "Check every mtf op and !mtf.tensor type (names, sizes, layouts, mesh axes)"
    READS_ONLY = True

    def apply(self, module_op) -> None:
        raise_diagnostics(verify_module(module_op))
