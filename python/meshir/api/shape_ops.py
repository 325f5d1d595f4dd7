"""Shape ops by name: broadcast, reshape, rename, transpose, slice, concat, pad, shift."""
from __future__ import annotations

import builtins

from meshir.dialect import TensorType
from meshir.dialect.ops import BroadcastOp, ConcatOp, PadOp, RenameOp, ReshapeOp, ShiftOp, SliceOp, TransposeOp

from .builder import build, located_error
from .dims import as_dims
from .tensor import Tensor


def _sizes(x: Tensor) -> dict[str, int]:
    return dict(zip(x.names, x.shape))


def _free(dims) -> TensorType:
    return TensorType.make([(d.name, d.size) for d in dims])


def _dim_name(x: Tensor, dim, op: str) -> str:
    name = getattr(dim, "name", dim)
    if name not in x.names:
        raise located_error(f"'{op}': '{name}' is not a dimension of {x.type}")
    return name


def broadcast(x: Tensor, dims) -> Tensor:
    """Add dims (replicating values) and/or reorder: the result has exactly `dims`."""
    out = as_dims(dims, _sizes(x), "broadcast dims")
    return build(BroadcastOp, _free(out).with_element_type(x.dtype), [x])


def reshape(x: Tensor, dims) -> Tensor:
    """Reinterpret the row-major elements as `dims` (merge or split names)."""
    out = as_dims(dims, _sizes(x), "reshape dims")
    return build(ReshapeOp, _free(out).with_element_type(x.dtype), [x])


def rename(x: Tensor, old, new=None) -> Tensor:
    """Rename dims: `rename(x, "a", "b")` or `rename(x, {"a": "b", ...})`."""
    mapping = old if isinstance(old, dict) else {old: new}
    mapping = {getattr(k, "name", k): getattr(v, "name", v) for k, v in mapping.items()}
    for k in mapping:
        _dim_name(x, k, "mtf.rename")
    dims = [(mapping.get(n, n), s) for n, s in zip(x.names, x.shape)]
    return build(RenameOp, TensorType.make(dims, x.dtype), [x])


def transpose(x: Tensor, order) -> Tensor:
    """The same dims in the order `order` (Dims or names)."""
    out = as_dims(order, _sizes(x), "transpose order")
    return build(TransposeOp, _free(out).with_element_type(x.dtype), [x])


def _resized(x: Tensor, dim: str, size: int) -> TensorType:
    return TensorType.make([(n, size if n == dim else s) for n, s in zip(x.names, x.shape)], x.dtype)


def slice(x: Tensor, dim, start: int, length: int) -> Tensor:
    """Elements [start, start + length) along `dim`."""
    name = _dim_name(x, dim, "mtf.slice")
    if length < 1:
        raise located_error(f"'mtf.slice': length must be positive, got {length}")
    return build(SliceOp, _resized(x, name, length), [x], {"dim": name, "start": int(start)})


def concat(xs, dim) -> Tensor:
    """Join tensors along `dim`; their other dims must agree."""
    xs = list(xs)
    if not xs:
        raise located_error("'mtf.concat' needs at least one operand")
    name = _dim_name(xs[0], dim, "mtf.concat")
    for x in xs[1:]:
        _dim_name(x, name, "mtf.concat")
    total = builtins.sum(x.type.size(name) for x in xs)
    return build(ConcatOp, _resized(xs[0], name, total), xs, {"dim": name})


def pad(x: Tensor, dim, low: int, high: int, value: float = 0.0) -> Tensor:
    """Add `low` elements before and `high` after along `dim`, filled with `value`."""
    name = _dim_name(x, dim, "mtf.pad")
    size = x.type.size(name) + low + high
    return build(PadOp, _resized(x, name, size), [x], {"dim": name, "low": int(low), "high": int(high), "value": float(value)})


def shift(x: Tensor, dim, offset: int, wrap: bool = False, fill: float = 0.0) -> Tensor:
    """out[i] = x[i - offset] along `dim`; vacated places get `fill`, or wrap around."""
    name = _dim_name(x, dim, "mtf.shift")
    return build(ShiftOp, x.type.without_layout(), [x], {"dim": name, "offset": int(offset), "wrap": bool(wrap), "fill": float(fill)})

