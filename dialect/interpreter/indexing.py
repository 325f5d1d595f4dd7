"""Rules of the indexing ops: one_hot and gather."""
from __future__ import annotations

import numpy as np

from ..op_registry import rule
from ..ops.indexing import GatherOp, OneHotOp
from .arrays import align


@rule("interpret", OneHotOp)
def one_hot(op, args):
    """out[..., k] = (ids[...] == k) along the depth name; out-of-range ids give a zero row."""
    ids, src, result = args[0], op.input_type, op.result_type
    depth = op.depth_name
    hot = ids[..., None] == np.arange(result.size(depth))
    return align(hot, list(src.names) + [depth], result.names).astype(result.dtype)


@rule("interpret", GatherOp)
def gather(op, args):
    """out[ids dims..., other table dims...] = table[dim = ids].

    Ids outside [0, size of `dim`) give zeros. That is what the partitioned program computes
    when the table is split along `dim`: each device looks up the ids that fall in its shard,
    contributes zeros for the others, and the shards are summed.
    """
    table, ids = args
    table_type, ids_type, result = op.operand_types[0], op.operand_types[1], op.result_type
    axis = table_type.index(op.attr("dim"))
    size = table.shape[axis]
    valid = (ids >= 0) & (ids < size)
    rows = np.take(table, np.where(valid, ids, 0), axis=axis)
    names = list(table_type.names[:axis]) + list(ids_type.names) + list(table_type.names[axis + 1 :])
    mask = align(valid, ids_type.names, names)
    rows = np.where(mask, rows, np.zeros((), rows.dtype))
    return align(rows, names, result.names)
