"""top_k, argmax and argmin along a named dim."""
from __future__ import annotations

from meshir.dialect.diagnostics import MeshIRValueError
from meshir.dialect.ops import ArgMaxOp, ArgMinOp, TopKOp
from meshir.dialect.tensor_type import Dimension

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds, located_error
from meshir.api.programs.dims import as_dims
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["argmax", "argmin", "top_k"]


@builds(TopKOp)
def top_k(x: Tensor, dim, k_dim) -> tuple[Tensor, Tensor]:
    """(values, indices) of the k largest elements along `dim`, in descending order, as
    `jax.lax.top_k`: floats in IEEE total order (+NaN first, -NaN last, -0 below +0), ties to
    the lowest index; indices are i32 into the whole `dim`. `k_dim` (a Dim of size k, or a
    (name, k) pair) replaces `dim` in both results."""
    checks.tensor(x, "the operand of mi.top_k")
    name = checks.dim_name(dim, x, "'mtf.top_k': dim")
    if isinstance(k_dim, str):
        raise located_error(f"'mtf.top_k': k_dim must be a Dim or a (name, k) pair with its size, got {k_dim!r}",
                            MeshIRValueError)
    (k,) = as_dims([k_dim], what="top_k k_dim")
    if k.name in x.names:
        raise located_error(f"'mtf.top_k': k_dim '{k.name}' is already a dimension of {x.type}", MeshIRValueError)
    size = x.type.size(name)
    if k.size > size:
        raise located_error(f"'mtf.top_k': k = {k.size} (the size of '{k.name}') is larger than '{name}' "
                            f"(size {size}) of {x.type}", MeshIRValueError)
    return build(TopKOp, None, [x], {"dim": name}, inference={"k_dim": Dimension(k.name, k.size)})


@builds(ArgMaxOp)
def argmax(x: Tensor, dim) -> Tensor:
    """The i32 index along `dim` of the largest element, as `jnp.argmax`: the first NaN if
    there is one, else the first of equal maxima (-0 equals +0); the result has `x`'s other dims."""
    checks.tensor(x, "the operand of mi.argmax")
    return build(ArgMaxOp, None, [x], {"dim": checks.dim_name(dim, x, "'mtf.argmax': dim")})


@builds(ArgMinOp)
def argmin(x: Tensor, dim) -> Tensor:
    """The i32 index along `dim` of the smallest element, as `jnp.argmin` (the first NaN if
    there is one, else the first of equal minima)."""
    checks.tensor(x, "the operand of mi.argmin")
    return build(ArgMinOp, None, [x], {"dim": checks.dim_name(dim, x, "'mtf.argmin': dim")})
