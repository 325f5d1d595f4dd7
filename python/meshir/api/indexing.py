"""one_hot and gather."""
from __future__ import annotations

from meshir.dialect import TensorType
from meshir.dialect.ops import GatherOp, OneHotOp

from .builder import build, located_error
from .dims import Dim, as_dims
from .tensor import Tensor


def one_hot(ids: Tensor, depth: Dim, dtype: str = "f32") -> Tensor:
    """out[..., k] = (ids[...] == k) over a new dim `depth`; out-of-range ids give zeros."""
    (depth,) = as_dims([depth], what="one_hot depth")
    if depth.name in ids.names:
        raise located_error(f"'mtf.one_hot': depth dim '{depth.name}' is already a dimension of the ids {ids.type}")
    dims = list(zip(ids.names, ids.shape)) + [(depth.name, depth.size)]
    return build(OneHotOp, TensorType.make(dims, dtype), [ids])


def gather(table: Tensor, ids: Tensor, dim) -> Tensor:
    """Rows of `table` along `dim` picked by integer `ids`: the result has the ids' dims then
    the table's other dims (embedding lookup). Out-of-range ids give zeros."""
    name = getattr(dim, "name", dim)
    if name not in table.names:
        raise located_error(f"'mtf.gather': '{name}' is not a dimension of the table {table.type}")
    rest = [(n, s) for n, s in zip(table.names, table.shape) if n != name]
    dims = list(zip(ids.names, ids.shape)) + [d for d in rest if d[0] not in ids.names]
    return build(GatherOp, TensorType.make(dims, table.dtype), [table, ids], {"dim": name})

