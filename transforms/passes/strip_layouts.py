"""`mtf-strip-layouts`: forget every layout decision, keeping names, sizes and element types.

Every `!mtf.tensor` type in the module - op results, block arguments, function signatures -
becomes the same type with free layouts and no `partial`. Collectives only change layouts
(they are identities in global semantics), so without layouts they would not verify: they
are erased, their results replaced by their operands; the bytes a halo exchange recorded on
a shift are dropped. What remains is the program's global meaning, ready for propagation
from scratch or for comparison with a partitioned version.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.ops import is_collective
from meshir.dialect.provenance import PROVENANCE_ATTR
from meshir.dialect.tensor_type import TensorType

from ..infra.registry import ModulePass, option, register_pass



@register_pass
@dataclass
class StripLayoutsPass(ModulePass):
    NAME = "mtf-strip-layouts"
    SUMMARY = "Remove every layout and partial marker from !mtf.tensor types (signatures included)"

    keep_collectives: bool = option(False, "keep collective ops (they will not verify without layouts)")

    def apply(self, module_op) -> None:
        with module_op.context:
            self._strip_op(module_op.operation)

    def _strip_op(self, op) -> None:
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    _strip_value(arg)
                for inner in list(block.operations):
                    self._strip_op(inner.operation)
        if is_collective(op) and not self.keep_collectives:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
            return
        if not is_collective(op):  # a halo exchange's bytes and reason go with its layout
            for name in ("bytes_per_device", PROVENANCE_ATTR):
                if name in op.attributes:
                    del op.attributes[name]
        for result in op.results:
            _strip_value(result)
        if op.name == "func.func":
            fn_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            stripped = ir.FunctionType.get([_stripped(t) for t in fn_type.inputs], [_stripped(t) for t in fn_type.results])
            op.attributes["function_type"] = ir.TypeAttr.get(stripped)


def _strip_value(value) -> None:
    new = _stripped(value.type)
    if new != value.type:
        value.set_type(new)


def _stripped(t: ir.Type) -> ir.Type:
    """`t` without layout if it is an `!mtf.tensor`, else `t` itself."""
    if t.typeid != ir.OpaqueType.static_typeid or ir.OpaqueType(t).dialect_namespace != "mtf":
        return t
    return TensorType.from_mlir(t).without_layout().to_mlir()
