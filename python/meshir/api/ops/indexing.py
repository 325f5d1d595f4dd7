"""one_hot and gather."""
from __future__ import annotations

from meshir.dialect.diagnostics import MeshIRValueError
from meshir.dialect.ops import GatherOp, OneHotOp

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds, located_error, result_type
from meshir.api.programs.dims import Dim, as_dims
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["gather", "one_hot"]


@builds(OneHotOp)
def one_hot(ids: Tensor, depth: Dim, dtype: str = "f32") -> Tensor:
    """out[..., k] = (ids[...] == k) over a new dim `depth`; out-of-range ids give zeros."""
    checks.tensor(ids, "the ids of mi.one_hot")
    dtype = checks.element_type(dtype, "'mtf.one_hot'")
    if isinstance(depth, str):
        raise located_error(f"'mtf.one_hot': depth must be a Dim or a (name, size) pair with its size, got {depth!r}",
                            MeshIRValueError)
    (depth,) = as_dims([depth], what="one_hot depth")
    if depth.name in ids.names:
        raise located_error(f"'mtf.one_hot': depth dim '{depth.name}' is already a dimension of the ids {ids.type}",
                            MeshIRValueError)
    dims = list(zip(ids.names, ids.shape)) + [(depth.name, depth.size)]
    return build(OneHotOp, result_type("mtf.one_hot", dims, dtype), [ids])


@builds(GatherOp)
def gather(table: Tensor, ids: Tensor, dim) -> Tensor:
    """Rows of `table` along `dim` picked by integer `ids`: the result has the ids' dims then
    the table's other dims (embedding lookup). Out-of-range ids give zeros."""
    checks.tensor(table, "the table of mi.gather")
    checks.tensor(ids, "the ids of mi.gather")
    name = checks.dim_name(dim, table, "'mtf.gather': the table")
    return build(GatherOp, None, [table, ids], {"dim": name})
