"""Shape ops by name: broadcast, reshape, rename, transpose, slice, concat, split, pad, shift."""
from __future__ import annotations


from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.ops import BroadcastOp, ConcatOp, PadOp, RenameOp, ReshapeOp, ShiftOp, SliceOp, SplitOp, TransposeOp

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds, located_error, result_type
from meshir.api.programs.dims import as_dims
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["broadcast", "concat", "pad", "rename", "reshape", "shift", "slice", "split", "transpose"]


def _sizes(x: Tensor) -> dict[str, int]:
    return dict(zip(x.names, x.shape))


def _new_dims(op: str, x, dims, what: str):
    """The result type of an op that gives `x` the dims `dims` (sizes known from x)."""
    checks.tensor(x, f"the operand of {op}")
    out = as_dims(dims, _sizes(x), what)
    return result_type(op, [(d.name, d.size) for d in out], x.dtype)


@builds(BroadcastOp)
def broadcast(x: Tensor, dims) -> Tensor:
    """Add dims (replicating values) and/or reorder: the result has exactly `dims`."""
    return build(BroadcastOp, _new_dims("mtf.broadcast", x, dims, "broadcast dims"), [x])


@builds(ReshapeOp)
def reshape(x: Tensor, dims) -> Tensor:
    """Reinterpret the row-major elements as `dims` (merge or split names)."""
    return build(ReshapeOp, _new_dims("mtf.reshape", x, dims, "reshape dims"), [x])


@builds(RenameOp)
def rename(x: Tensor, old, new=None) -> Tensor:
    """Rename dims: `rename(x, "a", "b")` or `rename(x, {"a": "b", ...})`."""
    checks.tensor(x, "the operand of mi.rename")
    if isinstance(old, dict):
        if new is not None:
            raise located_error(f"'mtf.rename': give a mapping or (old, new), not both (new={new!r})", MeshIRTypeError)
        pairs = list(old.items())
    else:
        pairs = [(old, new)]
    mapping = {}
    for k, v in pairs:
        mapping[checks.dim_name(k, x, "'mtf.rename'")] = checks.dim_key(v, f"'mtf.rename': the new name for {k!r}")
    names = [mapping.get(n, n) for n in x.names]
    for n in set(names):
        if names.count(n) > 1:
            renamed = ", ".join(f"'{k}' -> '{v}'" for k, v in mapping.items() if v == n)
            raise located_error(f"'mtf.rename': {renamed} gives {x.type} the name '{n}' twice", MeshIRValueError)
    return build(RenameOp, result_type("mtf.rename", list(zip(names, x.shape)), x.dtype), [x])


@builds(TransposeOp)
def transpose(x: Tensor, order) -> Tensor:
    """The same dims in the order `order` (Dims or names)."""
    return build(TransposeOp, _new_dims("mtf.transpose", x, order, "transpose order"), [x])


def _resized(op: str, x: Tensor, dim: str, size: int):
    return result_type(op, [(n, size if n == dim else s) for n, s in zip(x.names, x.shape)], x.dtype)


@builds(SliceOp)
def slice(x: Tensor, dim, start: int, length: int) -> Tensor:
    """Elements [start, start + length) along `dim`."""
    checks.tensor(x, "the operand of mi.slice")
    name = checks.dim_name(dim, x, "'mtf.slice'")
    start = checks.integer(start, "'mtf.slice': start", minimum=0)
    length = checks.integer(length, "'mtf.slice': length", minimum=1)
    return build(SliceOp, _resized("mtf.slice", x, name, length), [x], {"dim": name, "start": start})


@builds(ConcatOp)
def concat(xs, dim) -> Tensor:
    """Join tensors along `dim`; their other dims must agree."""
    xs = checks.tensors(xs, "the operands of mi.concat")
    if not xs:
        raise located_error(f"'mtf.concat' needs at least one operand, got {xs!r}", MeshIRValueError)
    name = checks.dim_name(dim, xs[0], "'mtf.concat'")
    for x in xs[1:]:
        checks.dim_name(name, x, "'mtf.concat'")
    return build(ConcatOp, None, xs, {"dim": name})


@builds(SplitOp)
def split(x: Tensor, dim, sizes) -> tuple[Tensor, ...]:
    """Cut `dim` into consecutive pieces: `sizes` a list of piece sizes summing to the dim's
    size, or a number of equal pieces. Each piece keeps the dim's name with its own size
    (Mesh-TensorFlow's split; `concat(split(x, d, s), d)` is x). The dim is cut whole on
    every device (split over mesh axes, it is gathered first); a piece keeps the layout rules'
    axes for the dim where they divide its size, else it comes out without them."""
    checks.tensor(x, "the operand of mi.split")
    name = checks.dim_name(dim, x, "'mtf.split'")
    size = _sizes(x)[name]
    if isinstance(sizes, (list, tuple)):
        sizes = [checks.integer(s, f"'mtf.split' of '{name}': piece #{i}'s size", minimum=1)
                 for i, s in enumerate(sizes)]
        if not sizes or sum(sizes) != size:
            raise located_error(f"'mtf.split' of '{name}' (size {size}): the sizes {sizes} sum to {sum(sizes)}, "
                                f"not {size}", MeshIRValueError)
    else:
        count = checks.integer(sizes, f"'mtf.split' of '{name}': the number of pieces", minimum=1)
        if size % count:
            raise located_error(f"'mtf.split' of '{name}' (size {size}): {count} equal pieces do not divide it "
                                "(give a list of sizes)", MeshIRValueError)
        sizes = [size // count] * count
    return build(SplitOp, None, [x], {"dim": name}, inference={"sizes": sizes})


@builds(PadOp)
def pad(x: Tensor, dim, low: int, high: int, value: float = 0.0) -> Tensor:
    """Add `low` elements before and `high` after along `dim`, filled with `value`."""
    checks.tensor(x, "the operand of mi.pad")
    name = checks.dim_name(dim, x, "'mtf.pad'")
    low = checks.integer(low, "'mtf.pad': low")
    high = checks.integer(high, "'mtf.pad': high")
    if low < 0 or high < 0:
        raise located_error(f"'mtf.pad' of '{name}' (size {_sizes(x)[name]}): padding must be non-negative, "
                            f"got low={low}, high={high} (to remove elements, use mi.slice)", MeshIRValueError)
    value = checks.real(value, "'mtf.pad': value", finite=False)
    return build(PadOp, None, [x], {"dim": name, "low": low, "high": high, "value": value})


@builds(ShiftOp)
def shift(x: Tensor, dim, offset: int, wrap: bool = False, fill: float = 0.0) -> Tensor:
    """out[i] = x[i - offset] along `dim`; vacated places get `fill`, or wrap around."""
    checks.tensor(x, "the operand of mi.shift")
    name = checks.dim_name(dim, x, "'mtf.shift'")
    attrs = {"dim": name, "offset": checks.integer(offset, "'mtf.shift': offset"),
             "wrap": checks.flag(wrap, "'mtf.shift': wrap"), "fill": checks.real(fill, "'mtf.shift': fill", finite=False)}
    return build(ShiftOp, None, [x], attrs)
