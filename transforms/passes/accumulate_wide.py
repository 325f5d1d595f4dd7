"""`mtf-accumulate-wide`: a gradient's narrow pieces are summed, and returned, in the wide type.

A widening cast `cast(v : bf16) : f32` whose result reaches a function result through adds,
casts and moves (in a gradient program: the pieces of a parameter's gradient) moves towards
v's sources: an `einsum` read only there returns f32 instead (an einsum may return a wider
float; it accumulated in f32 already), an `add` or `reduce_sum` adds in f32, and ops that only
move or relabel data (broadcast, transpose, rename, reshape, layout markers) move f32; at
anything else, or a value read elsewhere too, the cast stays where the value is. Where such an
einsum sums over a split dim, the sum across devices then moves f32 - the policy's
`reduce="float32"` (mi.Precision) - in both partitioning modes, since XLA's partitioner, too,
reduces a dot in its result type. Activation gradients are not pieces of a result: their sums
stay narrow.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.ops import BINARY_CLASSES, OP_CLASSES
from meshir.dialect.ops.contraction import EinsumOp, ReduceSumOp
from meshir.dialect.ops.elementwise import CastOp
from meshir.dialect.ops.shape import _SameElementOp
from meshir.dialect.tensor_type import TensorType, wider_floats

from ..infra.registry import ModulePass, register_pass

#: `mtf.add`'s class (generated, dialect/ops/elementwise.py): a gradient is the sum of its pieces.
ADD = BINARY_CLASSES["add"]
#: Ops through which a widening cast moves to the summands: the sum is computed wide.
SUMS = (ADD, ReduceSumOp)


@register_pass
@dataclass
class AccumulateWidePass(ModulePass):
    NAME = "mtf-accumulate-wide"
    SUMMARY = "Sum a gradient's narrow pieces in the wider type they are cast to (einsums return it)"

    def apply(self, module_op) -> None:
        with module_op.context:
            casts = []
            _collect(module_op.operation, casts)
            feeding = _feeding_results(module_op.operation)
            for cast in casts:
                if cast.results[0] in feeding:
                    _widen(cast)


def _feeding_results(module_op) -> set:
    """The values that reach a function's result through adds, casts and moves: in a
    gradient program, the pieces of each gradient (a parameter's gradient is the sum of
    its uses' pieces). Activation gradients do not qualify (a bias's gradient is a
    reduce_sum of one, which the walk does not enter): their sums stay narrow."""
    found, work = set(), []
    for fn in module_op.regions[0].blocks[0].operations:
        for block in (b for r in fn.operation.regions for b in r.blocks):
            work += [v for op in block.operations if op.operation.name == "func.return" for v in op.operation.operands]
    while work:
        value = work.pop()
        if value in found:
            continue
        found.add(value)
        owner = value.owner
        cls = OP_CLASSES.get(getattr(owner, "name", None))
        if cls is not None and (cls in (ADD, CastOp) or _moves_only(cls)):
            work += list(owner.operands)
    return found


def _collect(op, casts: list) -> None:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name == CastOp.OPERATION_NAME:
                    casts.append(inner.operation)
                _collect(inner.operation, casts)


def _widen(cast) -> None:
    source, wide = _elem(cast.operands[0]), _elem(cast.results[0])
    if wide not in wider_floats(source):
        return
    widened = _in_wide(cast.operands[0], wide, cast)
    cast.results[0].replace_all_uses_with(widened)
    cast.erase()


def _in_wide(value, wide: str, user):
    """`value` computed in `wide` where it is a sum of contractions read only here: einsums
    return `wide`, sums and moves of them compute in it; anything else is cast."""
    owner = value.owner.operation if isinstance(value, ir.OpResult) else None
    cls = OP_CLASSES.get(owner.name) if owner is not None else None
    if cls is None or len(list(value.uses)) != 1:
        return _cast(value, wide, user)
    if cls is CastOp and _elem(owner.operands[0]) == wide:  # a round trip through the narrow type
        return owner.operands[0]
    if cls is EinsumOp:
        pass
    elif cls in SUMS or (_moves_only(cls) and len(owner.operands) == 1):
        for i, operand in enumerate(owner.operands):
            owner.operands[i] = _in_wide(operand, wide, owner)
    else:
        return _cast(value, wide, user)
    value.set_type(TensorType.from_mlir(value.type).with_element_type(wide).to_mlir())
    return value


def _cast(value, wide: str, user):
    t = TensorType.from_mlir(value.type).with_element_type(wide)
    return CastOp(t.to_mlir(), [value], loc=user.location, ip=ir.InsertionPoint(user)).result


def _moves_only(cls) -> bool:
    """Ops that only move or relabel elements (broadcast, transpose, rename, reshape, layout
    markers and collectives)."""
    return cls.CHANGES_LAYOUT or issubclass(cls, _SameElementOp)


def _elem(value) -> str:
    return TensorType.from_mlir(value.type).element_type
