"""Walks over a block and the blocks nested in its ops (loop bodies), for the passes that
see a function's body whole, and over an op's attributes; copies of ops with their operands
remapped (`clone_ops`: inlining, autodiff's splits, the API's subfunctions)."""
from __future__ import annotations


def blocks_within(block):
    """`block`, then every block nested in its ops, outer before inner."""
    work = [block]
    while work:
        b = work.pop(0)
        yield b
        work += [inner for op in b.operations for region in op.operation.regions for inner in region.blocks]


def ops_within(block):
    """Every op of `block` and of the blocks nested in it."""
    for b in blocks_within(block):
        yield from b.operations


def values_within(block):
    """Every value defined in `block` and the blocks nested in it: block arguments, then
    each op's results, block by block."""
    for b in blocks_within(block):
        yield from b.arguments
        for op in b.operations:
            yield from op.operation.results


def named_attributes(operation) -> tuple:
    """An op's (name, attribute) pairs, sorted by name as MLIR keeps them. Attributes are
    uniqued per context, so equal pairs are equal attributes: the pairs serve as a key."""
    attrs = operation.attributes
    return tuple((named.name, named.attr) for named in (attrs[i] for i in range(len(attrs))))


def clone_ops(ops, mapping: dict, ip) -> None:
    """Copy `ops` to `ip`, reading operands through `mapping` (old value -> new value), which
    gains each copied result. An op's regions are copied whole (a loop's body reads only its
    own block arguments)."""
    for op in ops:
        copy = op.operation.clone(ip=ip)
        for i, operand in enumerate(op.operation.operands):
            if operand in mapping:
                copy.operands[i] = mapping[operand]
        for old, new in zip(op.operation.results, copy.results):
            mapping[old] = new
