"""`mtf-accumulate-wide`: an einsum whose narrow result is only widened returns the wide type.

`cast(einsum(a, b) : bf16) : f32`, possibly with ops that only move or relabel data in
between (broadcast, transpose, rename, reshape, layout markers), becomes `einsum(a, b) : f32`:
the contraction accumulates in f32 (it did already) and keeps the f32 sum instead of rounding
it to bf16 first. After autodiff under a mixed-precision policy this is the gradient of a
parameter, and where that einsum sums over a split dim, the sum across devices then moves f32
- the policy's `reduce="float32"` (mi.Precision) - in both partitioning modes, since XLA's
partitioner, too, reduces a dot in its result type.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.ops import OP_CLASSES
from meshir.dialect.ops.contraction import WIDER_FLOATS, EinsumOp
from meshir.dialect.ops.elementwise import CastOp
from meshir.dialect.ops.shape import _SameElementOp
from meshir.dialect.tensor_type import TensorType

from .registry import ModulePass, register_pass


@register_pass
@dataclass
class AccumulateWidePass(ModulePass):
    NAME = "mtf-accumulate-wide"
    SUMMARY = "An einsum whose narrow float result is only cast wider returns the wider type"

    def apply(self, module_op) -> None:
        with module_op.context:
            casts = []
            _collect(module_op.operation, casts)
            for cast in casts:
                _widen(cast)


def _collect(op, casts: list) -> None:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name == CastOp.OPERATION_NAME:
                    casts.append(inner.operation)
                _collect(inner.operation, casts)


def _widen(cast) -> None:
    source, wide = _elem(cast.operands[0]), _elem(cast.results[0])
    if wide not in WIDER_FLOATS.get(source, ()):
        return
    chain, value = [], cast.operands[0]
    while True:
        owner = value.owner
        if not hasattr(owner, "name") or len(list(value.uses)) != 1:
            return  # a block argument, or a narrow value read elsewhere too
        cls = OP_CLASSES.get(owner.name)
        if cls is EinsumOp:
            break
        if cls is None or len(owner.operands) != 1 or not (cls.CHANGES_LAYOUT or issubclass(cls, _SameElementOp)):
            return
        chain.append(owner)
        value = owner.operands[0]
    for op in [owner] + chain[::-1]:
        result = op.results[0]
        result.set_type(TensorType.from_mlir(result.type).with_element_type(wide).to_mlir())
    cast.results[0].replace_all_uses_with(cast.operands[0])
    cast.erase()


def _elem(value) -> str:
    return TensorType.from_mlir(value.type).element_type
