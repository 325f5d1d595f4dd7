"""`shard` (a layout constraint) and hand-written collectives, on global types."""
from __future__ import annotations

from meshir.dialect import TensorType
from meshir.dialect.diagnostics import MeshIRValueError
from meshir.dialect.ops import (
    AllGatherOp,
    AllReduceOp,
    AllSliceOp,
    AllToAllOp,
    CollectivePermuteOp,
    ReduceScatterOp,
    ShardOp,
)
from meshir.dialect.ops.collectives import REDUCTIONS

from . import checks
from .builder import build, located_error
from .tensor import Tensor


def _with(t: TensorType, layout: dict, op: str) -> TensorType:
    for dim in layout:
        if not t.has(dim):
            raise located_error(f"'{op}': '{dim}' is not a dimension of {t}", MeshIRValueError)
    try:
        return t.with_layout(layout)
    except ValueError as e:
        raise located_error(f"'{op}': {e}", MeshIRValueError) from None


def _operand(x, op: str) -> TensorType:
    return checks.tensor(x, f"the operand of {op}").type


def _layout_of(t: TensorType, name, op: str) -> tuple[str, ...]:
    name = checks.dim_key(name, f"'{op}': dim")
    if not t.has(name):
        raise located_error(f"'{op}': '{name}' is not a dimension of {t}", MeshIRValueError)
    return t.dim(name).axes or ()


def shard(x: Tensor, layout: dict) -> Tensor:
    """Constrain the dims named in `layout` ({dim: axis or axes}; `()` pins a dim
    replicated). Dims not named stay free for propagation to decide."""
    t = _operand(x, "mtf.shard")
    return build(ShardOp, _with(t.without_layout(), checks.layout(layout, "'mtf.shard' layout", optional=False), "mtf.shard"), [x])


def all_reduce(x: Tensor, axes, reduction: str = "sum") -> Tensor:
    """Complete a pending (partial) reduction over mesh `axes`."""
    t = _operand(x, "mtf.all_reduce")
    axes = checks.axes(axes, "'mtf.all_reduce' axes")
    reduction = checks.choice(reduction, REDUCTIONS, "'mtf.all_reduce' reduction")
    return build(AllReduceOp, t.with_partial([a for a in t.partial if a not in axes]), [x],
                 {"reduction": reduction, "axes": axes})


def all_gather(x: Tensor, dim: str, axes) -> Tensor:
    """Un-split `dim` over its minor-most `axes`."""
    t = _operand(x, "mtf.all_gather")
    axes = checks.axes(axes, "'mtf.all_gather' axes")
    before = _layout_of(t, dim, "mtf.all_gather")
    dim = getattr(dim, "name", dim)
    return build(AllGatherOp, t.with_layout({dim: before[: max(len(before) - len(axes), 0)]}), [x],
                 {"dim": dim, "axes": axes})


def all_slice(x: Tensor, dim: str, axes) -> Tensor:
    """Split `dim` further over `axes` (each device keeps its block; nothing moves)."""
    t = _operand(x, "mtf.all_slice")
    axes = checks.axes(axes, "'mtf.all_slice' axes")
    before = _layout_of(t, dim, "mtf.all_slice")
    dim = getattr(dim, "name", dim)
    return build(AllSliceOp, _with(t, {dim: before + axes}, "mtf.all_slice"), [x], {"dim": dim, "axes": axes})


def reduce_scatter(x: Tensor, dim: str, axes, reduction: str = "sum") -> Tensor:
    """Complete a pending reduction over `axes` and split `dim` over them."""
    t = _operand(x, "mtf.reduce_scatter")
    axes = checks.axes(axes, "'mtf.reduce_scatter' axes")
    reduction = checks.choice(reduction, REDUCTIONS, "'mtf.reduce_scatter' reduction")
    before = _layout_of(t, dim, "mtf.reduce_scatter")
    dim = getattr(dim, "name", dim)
    remaining = t.with_partial([a for a in t.partial if a not in axes])
    out = _with(remaining, {dim: before + axes}, "mtf.reduce_scatter")
    return build(ReduceScatterOp, out, [x], {"reduction": reduction, "dim": dim, "axes": axes})


def all_to_all(x: Tensor, src_dim: str, dst_dim: str, axes) -> Tensor:
    """Move the minor-most `axes` of `src_dim`'s split onto `dst_dim`."""
    t = _operand(x, "mtf.all_to_all")
    axes = checks.axes(axes, "'mtf.all_to_all' axes")
    src, dst = _layout_of(t, src_dim, "mtf.all_to_all"), _layout_of(t, dst_dim, "mtf.all_to_all")
    src_dim, dst_dim = getattr(src_dim, "name", src_dim), getattr(dst_dim, "name", dst_dim)
    if src_dim == dst_dim:
        raise located_error(f"'mtf.all_to_all': src_dim and dst_dim are both '{src_dim}'", MeshIRValueError)
    out = _with(t, {src_dim: src[: max(len(src) - len(axes), 0)], dst_dim: dst + axes}, "mtf.all_to_all")
    return build(AllToAllOp, out, [x], {"src_dim": src_dim, "dst_dim": dst_dim, "axes": axes})


def collective_permute(x: Tensor, layout: dict) -> Tensor:
    """Re-map which device holds which shard (each shard keeps its shape)."""
    t = _operand(x, "mtf.collective_permute")
    return build(CollectivePermuteOp, _with(t, checks.layout(layout, "'mtf.collective_permute' layout", optional=False),
                                            "mtf.collective_permute"), [x])
