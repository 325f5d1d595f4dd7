"""`mtf-inline`: replace every call of a function defined in the module by a copy of its body.

MLIR's inliner does not inline unregistered ops (MeshIR's `mtf` ops are unregistered), and
the lowering runs on single functions, so programs composed of functions (a training step
calling its gradient) are flattened here. Callees left without callers and marked private
are removed.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.signature import callees_first, function_name, functions
from meshir.dialect.walk import ops_within

from .registry import ModulePass, register_pass


@register_pass
@dataclass
class InlineCallsPass(ModulePass):
    NAME = "mtf-inline"
    SUMMARY = "Inline every call of a function defined in the module; drop private callees left unused"

    def apply(self, module_op) -> None:
        with module_op.context:
            inline_calls(module_op)


def inline_calls(module_op) -> None:
    """Inline calls in every function, callees first, then erase unused private functions."""
    by_name = {function_name(f): f for f in functions(module_op)}
    called = set()
    for fn in callees_first(module_op):
        for op in list(ops_within(fn.regions[0].blocks[0])):  # calls in loop bodies too
            if op.operation.name != "func.call":
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
    ip = ir.InsertionPoint(call)
    for op in block.operations:
        if op.operation.name == "func.return":
            for result, value in zip(call.operation.results, op.operation.operands):
                result.replace_all_uses_with(mapping[value])
            break
        copy = op.operation.clone(ip=ip)
        for i, operand in enumerate(op.operation.operands):
            if operand in mapping:
                copy.operands[i] = mapping[operand]
        for old, new in zip(op.operation.results, copy.results):
            mapping[old] = new
    call.operation.erase()


def _has_calls_to(module_op, name: str) -> bool:
    for fn in functions(module_op):
        for block in fn.regions[0].blocks:
            for op in ops_within(block):
                if op.operation.name == "func.call" and ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value == name:
                    return True
    return False
