"""`mtf-inline`: replace every call of a function defined in the module by a copy of its body.

MLIR's inliner does not inline unregistered ops (MeshIR's `mtf` ops are unregistered), and
the lowering runs on single functions, so programs composed of functions (a training step
calling its gradient) are flattened here. Callees left without callers and marked private
are removed.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.call_graph import callees_first
from meshir.dialect.signature import function_name, functions
from meshir.dialect import attribute_names
from meshir.dialect.walk import clone_ops, ops_within

from ..infra.registry import ModulePass, option, register_pass


@register_pass
@dataclass
class InlineCallsPass(ModulePass):
    NAME = "mtf-inline"
    SUMMARY = "Inline every call of a function defined in the module; drop private callees left unused"

    keep_marked: bool = option(False, "keep the calls that mtf-autodiff differentiates specially "
                                      "(mtf.remat, mtf.custom_vjp)")

    def apply(self, module_op) -> None:
        with module_op.context:
            inline_calls(module_op, keep=_is_marked if self.keep_marked else None)


def _is_marked(call) -> bool:
    attrs = call.operation.attributes
    return MARKS[0] in attrs or MARKS[1] in attrs


#: The call attributes of mi.remat and mi.custom_gradient (transforms/autodiff/calls.py).
MARKS = (attribute_names.REMAT, attribute_names.CUSTOM_VJP)


def inline_calls(module_op, keep=None) -> None:
    """Inline calls in every function, callees first, then erase unused private functions.
    `keep(call)` true leaves that call as it is (mi.remat's calls, until mtf-autodiff)."""
    by_name = {function_name(f): f for f in functions(module_op)}
    called = set()
    for fn in callees_first(module_op, f"{InlineCallsPass.NAME} cannot inline recursive calls"):
        for op in list(ops_within(fn.regions[0].blocks[0])):  # calls in loop bodies too
            if op.operation.name != "func.call" or (keep is not None and keep(op)):
                continue
            callee = by_name.get(ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value)
            if callee is not None and len(callee.regions[0].blocks):
                _inline(op, callee)
                called.add(function_name(callee))
    for name in called:
        fn = by_name[name]
        if "sym_visibility" in fn.attributes and not _has_calls_to(module_op, name):
            fn.operation.erase()


def _inline(call, callee) -> None:
    block = callee.regions[0].blocks[0]
    mapping = dict(zip(block.arguments, call.operation.operands))
    ops = list(block.operations)
    clone_ops(ops[:-1], mapping, ir.InsertionPoint(call))
    for result, value in zip(call.operation.results, ops[-1].operation.operands):
        result.replace_all_uses_with(mapping[value])
    call.operation.erase()


def _has_calls_to(module_op, name: str) -> bool:
    for fn in functions(module_op):
        for block in fn.regions[0].blocks:
            for op in ops_within(block):
                if op.operation.name == "func.call" and ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value == name:
                    return True
    return False
