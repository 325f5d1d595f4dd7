"""`shard` (a layout constraint) and hand-written collectives, on global types."""
from __future__ import annotations

from meshir.dialect import TensorType
from meshir.dialect.diagnostics import MeshIRValueError
from meshir.dialect.ops import (
    AllGatherOp,
    AllReduceOp,
    AllSliceOp,
    AllToAllOp,
    AsPartialOp,
    CollectivePermuteOp,
    ReduceScatterOp,
    ShardOp,
)
from meshir.dialect.op_registry import INTERNAL, register
from meshir.dialect.ops.collectives import REDUCTIONS

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds, dispatching, located_error
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["shard", "reshard", "all_reduce", "all_gather", "all_slice", "reduce_scatter", "all_to_all", "collective_permute"]


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


@builds(ShardOp)
def shard(x: Tensor, layout: dict) -> Tensor:
    """Constrain the dims named in `layout` ({dim: axis or axes}; `()` pins a dim
    replicated). Dims not named stay free for propagation to decide."""
    t = _operand(x, "mtf.shard")
    return build(ShardOp, _with(t.without_layout(), checks.layout(layout, "'mtf.shard' layout", optional=False), "mtf.shard"), [x])


@dispatching
def reshard(x: Tensor, layout: dict) -> Tensor:
    """`x` resharded to `layout` ({dim: axis or axes}; `()` gathers a dim whole) at this
    point: unlike `shard`, the layout does not propagate back through it, so `x` keeps the
    layout its producer and other readers give it and the collective happens here (e.g.
    Megatron's sequence parallelism: a layer norm on the split sequence, its output
    gathered whole for the matmuls). Dims not named stay free and relay as usual."""
    t = _operand(x, "mtf.reshard")
    layout = checks.layout(layout, "'mi.reshard' layout", optional=False)
    result = _with(t.without_layout(), layout, "mi.reshard")
    return build(ShardOp, result, [x], {"cut": [checks.dim_name(d, x, "'mi.reshard'") for d in layout]})


@builds(AllReduceOp)
def all_reduce(x: Tensor, axes, reduction: str = "sum") -> Tensor:
    """Complete a pending (partial) reduction over mesh `axes`."""
    _operand(x, "mtf.all_reduce")
    axes = checks.axes(axes, "'mtf.all_reduce' axes")
    reduction = checks.choice(reduction, REDUCTIONS, "'mtf.all_reduce' reduction")
    return build(AllReduceOp, None, [x], {"reduction": reduction, "axes": axes})


@builds(AllGatherOp)
def all_gather(x: Tensor, dim: str, axes) -> Tensor:
    """Un-split `dim` over its minor-most `axes`."""
    return build(AllGatherOp, None, [x], _dim_attrs(x, "mtf.all_gather", dim=dim, axes=axes))


@builds(AllSliceOp)
def all_slice(x: Tensor, dim: str, axes) -> Tensor:
    """Split `dim` further over `axes` (each device keeps its block; nothing moves)."""
    return build(AllSliceOp, None, [x], _dim_attrs(x, "mtf.all_slice", dim=dim, axes=axes))


@builds(ReduceScatterOp)
def reduce_scatter(x: Tensor, dim: str, axes, reduction: str = "sum") -> Tensor:
    """Complete a pending reduction over `axes` and split `dim` over them."""
    reduction = checks.choice(reduction, REDUCTIONS, "'mtf.reduce_scatter' reduction")
    return build(ReduceScatterOp, None, [x],
                 {"reduction": reduction, **_dim_attrs(x, "mtf.reduce_scatter", dim=dim, axes=axes)})


@builds(AllToAllOp)
def all_to_all(x: Tensor, src_dim: str, dst_dim: str, axes) -> Tensor:
    """Move the minor-most `axes` of `src_dim`'s split onto `dst_dim`."""
    attrs = _dim_attrs(x, "mtf.all_to_all", src_dim=src_dim, dst_dim=dst_dim, axes=axes)
    if attrs["src_dim"] == attrs["dst_dim"]:
        raise located_error(f"'mtf.all_to_all': src_dim and dst_dim are both '{attrs['src_dim']}'", MeshIRValueError)
    return build(AllToAllOp, None, [x], attrs)


def _dim_attrs(x, op: str, axes, **dims) -> dict:
    """A collective's dim and axes attributes, checked: dims of the operand, axes a list of
    mesh axis names. The layout change itself is the op's (`result_of`)."""
    t = _operand(x, op)
    for name in dims.values():
        _layout_of(t, name, op)
    return {**{k: getattr(v, "name", v) for k, v in dims.items()}, "axes": checks.axes(axes, f"'{op}' axes")}


@builds(CollectivePermuteOp)
def collective_permute(x: Tensor, layout: dict) -> Tensor:
    """Re-map which device holds which shard (each shard keeps its shape)."""
    t = _operand(x, "mtf.collective_permute")
    return build(CollectivePermuteOp, _with(t, checks.layout(layout, "'mtf.collective_permute' layout", optional=False),
                                            "mtf.collective_permute"), [x])


#: Only mtf-insert-collectives writes one, where it adds sums pending over different axes.
register("build", AsPartialOp, INTERNAL)
