"""`mtf-autodiff`: reverse-mode differentiation on the `mtf` IR.

    meshir-opt f.mlir --pass-pipeline='builtin.module(mtf-autodiff{function=ffn wrt=w1,w2})'

adds `@ffn_grad` after `@ffn`, returning the value and the gradients with respect to the
chosen arguments (results named `value`, `grad_w1`, `grad_w2`). See gradient.py.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..infra.registry import ModulePass, option, register_pass
from ..autodiff.gradient import gradient_function


@register_pass
@dataclass
class AutodiffPass(ModulePass):
    NAME = "mtf-autodiff"
    SUMMARY = "Add <function>_grad: the value and the gradients of a function's scalar result (reverse mode)"

    function: str = option("", "the function to differentiate (default: the entry function)")
    wrt: tuple[str, ...] = option((), "arguments to differentiate with respect to (default: every float argument)")
    result: str = option("", "the result to differentiate, by name (default: the only result)")
    cotangent: bool = option(False, "take the result's cotangent as a last argument `cotangent` (for non-scalar results)")
    with_value: bool = option(True, "return the differentiated result first, as `value`")

    def apply(self, module_op) -> None:
        gradient_function(module_op, self.function or None, self.wrt, self.result or None,
                          self.cotangent, self.with_value)
