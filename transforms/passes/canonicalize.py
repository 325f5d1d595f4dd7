"""`mtf-canonicalize`: fold trivial `mtf` ops, merge identical pure ones, erase unused ones.

MLIR's own `canonicalize` and `cse` leave `mtf` ops alone: they are registered in Python
only, so MLIR's C++ side knows no traits for them and must treat them as having effects.
This pass does the same work from the traits on the op classes (dialect/ops/):

- **fold**: each op's `fold()` names a value that computes exactly its result (an operand,
  or the result of one simpler op it builds), e.g. a reshape to its operand's type, a
  transpose of a transpose, x * 1; the op's uses take that value;
- **CSE**: of two ops with `PURE` true and the same name, operands, attributes and result
  types (layouts included) in one block, the later one is replaced by the earlier one;
- **DCE**: ops with `PURE` true whose results are unused are erased (`mtf.shard` is not pure:
  propagation reads it even when its result is unused).

Ops of other dialects (func.call, StableHLO) are left as they are. Each block is walked in
order (operands are canonical before their users), then backwards for DCE, until nothing
changes. The pass works on any form of the module (before propagation, propagated,
partitioned): every fold keeps the full type of the value it replaces.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.ops import OP_CLASSES
from meshir.dialect.provenance import PROVENANCE_ATTR
from meshir.dialect.walk import named_attributes

from ..infra.registry import ModulePass, register_pass


@register_pass
@dataclass
class CanonicalizePass(ModulePass):
    NAME = "mtf-canonicalize"
    SUMMARY = "Fold trivial mtf ops, merge identical pure ones (CSE) and erase unused pure ones (DCE)"
    #: Every rewrite keeps types and is local: a verified, partitioned or global input gives a
    #: verified, partitioned or global output (uses get a value of the type they had; the ops
    #: a fold builds - one transpose, rename or reshape for two - verify because the two did).
    KEEPS_FORMS = True

    def apply(self, module_op) -> None:
        with module_op.context:
            canonicalize(module_op)


def canonicalize(module_op) -> bool:
    """Canonicalize every block nested in `module_op` (verified), in place; whether anything
    changed. Call it inside the module's context.

    One round reaches the fixed point: the forward walk sees every op after its operands
    are final (folded, merged), a fold's new op is canonicalized at once, and erasing dead
    ops enables no fold nor merge. (test/canonicalize checks that a second run changes nothing.)"""
    changed = False
    for region in module_op.regions:
        for block in region.blocks:
            changed |= _rewrite_block(block)
            changed |= _erase_dead(block)
    return changed


def _rewrite_block(block) -> bool:
    """Fold and CSE the ops of `block` (and of blocks nested in them), in order."""
    changed = False
    seen: dict = {}  # CSE key -> the kept op with it
    kept: set = set()  # the ops of `block` visited and kept so far
    for op in list(block.operations):
        for region in op.operation.regions:
            for inner in region.blocks:
                changed |= _rewrite_block(inner)
        cls = OP_CLASSES.get(op.operation.name)
        replacement = None
        if cls is not None and len(op.operation.results) and not len(op.operation.regions):
            # (an op with a body, a loop, is not merged: its key would have to compare bodies)
            replacement = _canonical_value(op, cls, seen, kept)
        changed |= _settle(op, replacement, kept)
    return changed


def _settle(op, replacement, kept: set) -> bool:
    """Keep `op` (no replacement), or give its uses `replacement` (a value, or a list of one
    per result) and erase it; whether it went."""
    if replacement is None:
        kept.add(op.operation)
        return False
    replacements = replacement if isinstance(replacement, list) else [replacement]
    for result, value in zip(op.operation.results, replacements, strict=True):
        result.replace_all_uses_with(value)
    op.operation.erase()
    return True


def _canonical_value(op, cls, seen: dict, kept: set):
    """The value that replaces `op`'s result (a fold, or an identical earlier op's; a list of
    its results for an op with several), or None when `op` stays (and is then recorded for CSE)."""
    several = len(op.operation.results) > 1
    value = None if several else op.fold()
    if value is not None:
        made = _new_op(value, op, kept)
        if made is not None:  # a fold may build one op (the one reshape of two): canonicalize it too
            again = _canonical_value(made, OP_CLASSES[made.operation.name], seen, kept)
            if _settle(made, again, kept):
                value = again
        return value
    if not cls.PURE:
        return None
    key = _cse_key(op.operation)
    other = seen.get(key)
    if other is not None:
        return list(other.operation.results) if several else other.operation.results[0]
    seen[key] = op
    return None


def _new_op(value, op, kept: set):
    """The mtf op that a fold of `op` built to produce `value`, or None: an op of `op`'s block
    that the walk has not kept (folds build right before the op they fold)."""
    made = value.owner
    operation = getattr(made, "operation", None)
    if operation is None or operation.name not in OP_CLASSES or operation in kept:
        return None
    return made if operation.block == op.operation.block else None


def _cse_key(operation) -> tuple:
    """What two ops must share to be merged. Each op's attributes are read once, into its
    key: a model has hundreds of scalar constants of one type, which comparing attributes
    against every earlier op of the same operands and types would read quadratically."""
    return (operation.name, tuple(operation.operands), tuple(r.type for r in operation.results),
            _attributes(operation))


def _attributes(operation) -> tuple:
    """The op's (name, attribute) pairs but a collective's provenance: two equal collectives
    needed for different reasons are still one (the first one's reason)."""
    return tuple(pair for pair in named_attributes(operation) if pair[0] != PROVENANCE_ATTR)


def _erase_dead(block) -> bool:
    """Erase the pure mtf ops of `block` whose results nobody uses, last first (so that a
    chain of dead ops goes in one sweep), and likewise in nested blocks."""
    changed = False
    for op in reversed(list(block.operations)):
        operation = op.operation
        for region in operation.regions:
            for inner in region.blocks:
                changed |= _erase_dead(inner)
        cls = OP_CLASSES.get(operation.name)
        if cls is None or not cls.PURE:
            continue
        if all(_unused(r) for r in operation.results):
            operation.erase()
            changed = True
    return changed


def _unused(value) -> bool:
    for _ in value.uses:
        return False
    return True
