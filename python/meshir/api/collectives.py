"""`shard` (a layout constraint) and hand-written collectives, on global types."""
from __future__ import annotations

from meshir.dialect import TensorType
from meshir.dialect.ops import (
    AllGatherOp,
    AllReduceOp,
    AllSliceOp,
    AllToAllOp,
    CollectivePermuteOp,
    ReduceScatterOp,
    ShardOp,
)
from meshir.dialect.tensor_type import normalize_axes

from .builder import build, located_error
from .tensor import Tensor


def _axes(axes) -> tuple[str, ...]:
    return normalize_axes(axes) or ()


def _with(t: TensorType, layout: dict, op: str) -> TensorType:
    for dim in layout:
        if not t.has(dim):
            raise located_error(f"'{op}': '{dim}' is not a dimension of {t}")
    try:
        return t.with_layout(layout)
    except ValueError as e:
        raise located_error(f"'{op}': {e}") from None


def _layout_of(t: TensorType, name: str) -> tuple[str, ...]:
    if not t.has(name):
        raise located_error(f"'{name}' is not a dimension of {t}")
    return t.dim(name).axes or ()


def shard(x: Tensor, layout: dict) -> Tensor:
    """Constrain the dims named in `layout` ({dim: axis or axes}; `()` pins a dim
    replicated). Dims not named stay free for propagation to decide."""
    return build(ShardOp, _with(x.type.without_layout(), layout, "mtf.shard"), [x])


def all_reduce(x: Tensor, axes, reduction: str = "sum") -> Tensor:
    """Complete a pending (partial) reduction over mesh `axes`."""
    axes, t = _axes(axes), x.type
    return build(AllReduceOp, t.with_partial([a for a in t.partial if a not in axes]), [x],
                 {"reduction": reduction, "axes": axes})


def all_gather(x: Tensor, dim: str, axes) -> Tensor:
    """Un-split `dim` over its minor-most `axes`."""
    axes, t = _axes(axes), x.type
    before = _layout_of(t, dim)
    return build(AllGatherOp, t.with_layout({dim: before[: max(len(before) - len(axes), 0)]}), [x],
                 {"dim": dim, "axes": axes})


def all_slice(x: Tensor, dim: str, axes) -> Tensor:
    """Split `dim` further over `axes` (each device keeps its block; nothing moves)."""
    axes, t = _axes(axes), x.type
    return build(AllSliceOp, _with(t, {dim: _layout_of(t, dim) + axes}, "mtf.all_slice"), [x], {"dim": dim, "axes": axes})


def reduce_scatter(x: Tensor, dim: str, axes, reduction: str = "sum") -> Tensor:
    """Complete a pending reduction over `axes` and split `dim` over them."""
    axes, t = _axes(axes), x.type
    remaining = t.with_partial([a for a in t.partial if a not in axes])
    out = _with(remaining, {dim: _layout_of(t, dim) + axes}, "mtf.reduce_scatter")
    return build(ReduceScatterOp, out, [x], {"reduction": reduction, "dim": dim, "axes": axes})


def all_to_all(x: Tensor, src_dim: str, dst_dim: str, axes) -> Tensor:
    """Move the minor-most `axes` of `src_dim`'s split onto `dst_dim`."""
    axes, t = _axes(axes), x.type
    src = _layout_of(t, src_dim)
    out = _with(t, {src_dim: src[: max(len(src) - len(axes), 0)], dst_dim: _layout_of(t, dst_dim) + axes}, "mtf.all_to_all")
    return build(AllToAllOp, out, [x], {"src_dim": src_dim, "dst_dim": dst_dim, "axes": axes})


def collective_permute(x: Tensor, layout: dict) -> Tensor:
    """Re-map which device holds which shard (each shard keeps its shape)."""
    return build(CollectivePermuteOp, _with(x.type, layout, "mtf.collective_permute"), [x])
