"""one_hot and gather on local shards.

one_hot: the ids are compared with the global indices of the device's block of the depth dim.
gather: when the table is split along the looked-up dim, each device looks the ids up in its
block (ids minus the block's first index); ids outside the block, like out-of-range ids,
give zero rows, and the result is a partial sum over the table's axes.
"""
from __future__ import annotations

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import GatherOp, OneHotOp

from . import builder as hlo
from .builder import i64_dims
from .context import FunctionLowering
from .creation import global_iota
from .types import Local


@rule("lower", OneHotOp)
def one_hot(p: FunctionLowering, op) -> Local:
    """The literal one-hot (scatter_add.py declares a special form that folds it away)."""
    b, src, result = p.b, op.input_type, op.result_type
    (ids,) = p.operands(op)
    shape = p.shape(result)
    ids = hlo.align(b, ids, src.names, result.names, shape)
    depth = global_iota(p, result, result.index(op.depth_name), ids.elem)
    return hlo.convert(b, hlo.compare(b, "eq", ids, depth), result.element_type)


def gather_rows(b: hlo.Builder, table: Local, ids: Local, axis: int) -> Local:
    """`table[ids]` along `axis` for in-range ids; the result's dims are the ids' dims then
    the table's other dims."""
    r = ids.rank
    sizes = list(table.shape)
    sizes[axis] = 1
    numbers = (
        f"offset_dims = {i64_dims(range(r, r + table.rank - 1))}, collapsed_slice_dims = [{axis}], "
        f"start_index_map = [{axis}], index_vector_dim = {r}"
    )
    shape = list(ids.shape) + [s for i, s in enumerate(table.shape) if i != axis]
    attrs = {"dimension_numbers": f"#stablehlo.gather<{numbers}>", "slice_sizes": hlo.i64_array(sizes),
             "indices_are_sorted": "false"}
    return b.op("gather", [table, ids], shape, table.elem, attrs)


@rule("lower", GatherOp)
def gather(p: FunctionLowering, op) -> Local:
    b = p.b
    table_type, ids_type = op.operand_types
    result = op.result_type
    table, ids = p.operands(op)
    dim = op.attr("dim")
    axis = table_type.index(dim)
    if p.split_axes(table_type, axis):
        offset = hlo.convert(b, p.offsets(table_type)[axis], ids.elem)
        ids = hlo.binary(b, "subtract", ids, hlo.scalar_to(b, offset, ids.shape))
    valid = hlo.binary(
        b, "and",
        hlo.compare(b, "ge", ids, hlo.splat_like(b, 0, ids)),
        hlo.compare(b, "lt", ids, hlo.splat_like(b, table.shape[axis], ids)),
    )
    rows = gather_rows(b, table, hlo.select(b, valid, ids, hlo.splat_like(b, 0, ids)), axis)
    mask = hlo.broadcast_in_dim(b, valid, rows.shape, range(ids.rank))
    rows = hlo.select(b, mask, rows, hlo.splat_like(b, 0, rows))
    names = list(ids_type.names) + [n for n in table_type.names if n != dim]
    return hlo.align(b, rows, names, result.names, p.shape(result))
