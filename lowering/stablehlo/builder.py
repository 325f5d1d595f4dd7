"""Text of single StableHLO ops, in MLIR's generic form, for the per-device program.

Each lowering rule calls the small functions below; each returns the `Local` it defines.
Generic form (`%v = "stablehlo.add"(%a, %b) : (...) -> ...`) is one syntax for every op,
so one function (`Builder.op`) writes them all; MLIR parses the text and prints it in the
pretty form. Every op carries the location of the `mtf` op it comes from.
"""
from __future__ import annotations

import contextlib
import itertools
from collections import ChainMap

import numpy as np

from meshir.dialect.tensor_type import ELEMENT_TYPES

from .types import Local, is_float, tensor_text

#: ELEMENT_TYPES and the types only StableHLO code uses (a Mapping: bf16's dtype is made on first use).
_NUMPY = ChainMap({"ui32": np.dtype(np.uint32), "i16": np.dtype(np.int16)}, ELEMENT_TYPES)


def i64_array(values) -> str:
    """`array<i64: 0, 1>` (a DenseI64ArrayAttr)."""
    values = list(values)
    return "array<i64" + (": " + ", ".join(str(int(v)) for v in values) if values else "") + ">"


def i64_dims(values) -> str:
    """`[0, 1]`, the list syntax of dimension numbers in `#stablehlo.*<...>` attributes."""
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def scalar_literal(value, elem: str) -> str:
    """The exact literal of `value` converted to `elem` (floats by their bit pattern, so
    bf16 rounding, infinities and NaN are those of NumPy's conversion)."""
    if elem == "i1":
        return "true" if bool(value) else "false"
    dtype = _NUMPY[elem]
    x = np.asarray(value).astype(dtype)
    if is_float(elem):
        bits = x.reshape(1).view(f"u{dtype.itemsize}")[0]
        return f"0x{int(bits):0{2 * dtype.itemsize}X}"
    return str(int(x))


class Builder:
    """Collects the lines of one per-device program; names SSA values uniquely."""

    def __init__(self, channels=None, narrow_dots: bool = True):
        self.lines: list[str] = []
        #: bf16/f16 dot operands stay narrow, with an f32 result (matrix units of GPUs and
        #: TPUs); False: converted to f32 first (XLA:CPU runs no narrow dot with a wide result).
        self.narrow_dots = narrow_dots
        self._names = itertools.count()
        self._channels = channels if channels is not None else itertools.count(1)
        self.location = ""
        self._cache: dict = {}

    def fresh(self) -> str:
        return f"%v{next(self._names)}"

    def channel_handle(self) -> str:
        """A new channel, numbered over the whole module (jax's `type = 1`: device to device)."""
        return f"#stablehlo.channel_handle<handle = {next(self._channels)}, type = 1>"

    @contextlib.contextmanager
    def region(self):
        """Collect the lines emitted meanwhile apart (a region's body, as a list the caller
        reads after), with values cached outside not reused inside and vice versa: a region
        sees only what it defines (loops.py keeps bodies isolated from above)."""
        saved = self.lines, self._cache, self.location
        self.lines, self._cache = [], {}
        try:
            yield self.lines
        finally:
            self.lines, self._cache, self.location = saved

    def cached(self, key, make):
        """`make()` once per program for `key` (partition id, coordinates, block offsets)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def op(self, name: str, operands, shape, elem: str, attrs: dict | None = None, region: str | None = None) -> Local:
        """Emit `"stablehlo.<name>"(operands) ({region}) {attrs} : (types) -> type` and
        return its result; a `name` with a dialect prefix (`chlo.erf`) is taken as it is."""
        result = Local(self.fresh(), tuple(shape), elem)
        self._emit(result.name, name, operands, result.type, attrs, region)
        return result

    def ops(self, name: str, operands, results, attrs: dict | None = None, region: str | None = None) -> list[Local]:
        """`op` for an op with several results, `results` their (shape, elem) pairs: `%r:n =
        ...` whose results are `%r#0` to `%r#n-1` (regions several: `region` is their text
        joined by commas)."""
        base = self.fresh()
        out = [Local(f"{base}#{k}", tuple(shape), elem) for k, (shape, elem) in enumerate(results)]
        self._emit(f"{base}:{len(out)}", name, operands, f"({', '.join(v.type for v in out)})", attrs, region)
        return out

    def _emit(self, head: str, name: str, operands, result_types: str, attrs, region) -> None:
        qualified = name if "." in name else f"stablehlo.{name}"
        text = f'{head} = "{qualified}"({", ".join(v.name for v in operands)})'
        if region:
            text += f" ({region})"
        if attrs:
            text += " {" + ", ".join(f"{k} = {v}" if v else k for k, v in attrs.items()) + "}"
        text += f" : ({', '.join(v.type for v in operands)}) -> {result_types}"
        self.lines.append(text + (f" {self.location}" if self.location else ""))


def region_text(b: Builder, args: list[Local], make) -> str:
    """The text of a region whose block arguments are `args` (fresh Locals): the ops that
    `make(args)` emits through `b`, then a return of the Locals it gives."""
    with b.region() as lines:
        returned = make(args)
    head = ", ".join(f"{a.name}: {a.type}" for a in args)
    ret = f'"stablehlo.return"({", ".join(v.name for v in returned)}) : ({", ".join(v.type for v in returned)}) -> ()'
    return "{\n^bb0(" + head + "):\n" + "\n".join("  " + line for line in lines + [ret]) + "\n}"


def scalar_arguments(b: Builder, values) -> list[Local]:
    """Fresh 0-d block arguments of the element types of `values`."""
    return [Local(b.fresh(), (), v.elem) for v in values]


# -- creation ---------------------------------------------------------------------------
def constant(b: Builder, value, elem: str, shape=()) -> Local:
    """A splat constant of `shape` (scalar by default)."""
    literal = scalar_literal(value, elem)
    return b.op("constant", [], shape, elem, {"value": f"dense<{literal}> : {tensor_text(shape, elem)}"})


def dense_constant(b: Builder, array: np.ndarray, elem: str) -> Local:
    """A constant holding `array` exactly (raw little-endian bytes; i1 as a list of bools)."""
    shape = tuple(array.shape)
    if elem == "i1":
        body = np.array2string(np.asarray(array, bool), separator=", ", threshold=np.inf)
        body = body.replace("True", "true").replace("False", "false").replace("\n", "")
        if not shape:
            body = "true" if bool(array) else "false"
    else:
        body = '"0x' + np.ascontiguousarray(array.astype(_NUMPY[elem])).tobytes().hex().upper() + '"'
    return b.op("constant", [], shape, elem, {"value": f"dense<{body}> : {tensor_text(shape, elem)}"})


def iota(b: Builder, shape, dim: int, elem: str) -> Local:
    return b.op("iota", [], shape, elem, {"iota_dimension": f"{dim} : i64"})


def partition_id(b: Builder) -> Local:
    return b.cached("partition_id", lambda: b.op("partition_id", [], (), "ui32"))


# -- elementwise --------------------------------------------------------------------------
def convert(b: Builder, v: Local, elem: str) -> Local:
    return v if v.elem == elem else b.op("convert", [v], v.shape, elem)


def bitcast_convert(b: Builder, v: Local, elem: str) -> Local:
    """The same bits read as `elem` (of the same width)."""
    return v if v.elem == elem else b.op("bitcast_convert", [v], v.shape, elem)


def unary(b: Builder, name: str, v: Local) -> Local:
    return b.op(name, [v], v.shape, v.elem)


def binary(b: Builder, name: str, x: Local, y: Local) -> Local:
    return b.op(name, [x, y], x.shape, x.elem)


def compare_type(elem: str) -> str:
    """FLOAT for floats, UNSIGNED for i1 and ui32 (as jax does for bool), SIGNED otherwise."""
    if is_float(elem):
        return "FLOAT"
    return "UNSIGNED" if elem in ("i1", "ui32") else "SIGNED"


def compare(b: Builder, direction: str, x: Local, y: Local) -> Local:
    return b.op(
        "compare",
        [x, y],
        x.shape,
        "i1",
        {
            "comparison_direction": f"#stablehlo<comparison_direction {direction.upper()}>",
            "compare_type": f"#stablehlo<comparison_type {compare_type(x.elem)}>",
        },
    )


def select(b: Builder, cond: Local, on_true: Local, on_false: Local) -> Local:
    return b.op("select", [cond, on_true, on_false], on_true.shape, on_true.elem)


def splat_like(b: Builder, value, v: Local, elem: str | None = None) -> Local:
    """A constant of `v`'s shape filled with `value`."""
    return constant(b, value, elem or v.elem, v.shape)


def scalar_to(b: Builder, s: Local, shape) -> Local:
    """A scalar broadcast to `shape`."""
    return broadcast_in_dim(b, s, shape, [])


# -- shape --------------------------------------------------------------------------------
def broadcast_in_dim(b: Builder, v: Local, shape, dims) -> Local:
    if tuple(shape) == v.shape and list(dims) == list(range(v.rank)):
        return v
    return b.op("broadcast_in_dim", [v], shape, v.elem, {"broadcast_dimensions": i64_array(dims)})


def transpose(b: Builder, v: Local, perm) -> Local:
    perm = list(perm)
    if perm == list(range(v.rank)):
        return v
    shape = tuple(v.shape[i] for i in perm)
    return b.op("transpose", [v], shape, v.elem, {"permutation": i64_array(perm)})


def reshape(b: Builder, v: Local, shape) -> Local:
    return v if tuple(shape) == v.shape else b.op("reshape", [v], shape, v.elem)


def align(b: Builder, v: Local, names, target_names, target_shape) -> Local:
    """`v` (dims named `names`) moved into `target_names`' order and broadcast to
    `target_shape`: by-name broadcasting, as the interpreter's `broadcast_to_type`."""
    names, target_names = list(names), list(target_names)
    present = [n for n in target_names if n in names]
    moved = transpose(b, v, [names.index(n) for n in present])
    return broadcast_in_dim(b, moved, target_shape, [target_names.index(n) for n in present])


def slice_(b: Builder, v: Local, starts, limits) -> Local:
    shape = tuple(hi - lo for lo, hi in zip(starts, limits))
    if shape == v.shape:
        return v
    attrs = {"start_indices": i64_array(starts), "limit_indices": i64_array(limits), "strides": i64_array([1] * v.rank)}
    return b.op("slice", [v], shape, v.elem, attrs)


def slice_along(b: Builder, v: Local, axis: int, start: int, stop: int) -> Local:
    starts = [0] * v.rank
    limits = list(v.shape)
    starts[axis], limits[axis] = start, stop
    return slice_(b, v, starts, limits)


def concatenate(b: Builder, values, axis: int) -> Local:
    values = list(values)
    if len(values) == 1:
        return values[0]
    shape = list(values[0].shape)
    shape[axis] = sum(v.shape[axis] for v in values)
    return b.op("concatenate", values, shape, values[0].elem, {"dimension": f"{axis} : i64"})


def pad(b: Builder, v: Local, value: Local, axis: int, low: int, high: int) -> Local:
    """Pad along one axis with the scalar `value`; negative amounts cut (StableHLO allows it)."""
    lows, highs = [0] * v.rank, [0] * v.rank
    lows[axis], highs[axis] = low, high
    shape = list(v.shape)
    shape[axis] += low + high
    attrs = {"edge_padding_low": i64_array(lows), "edge_padding_high": i64_array(highs), "interior_padding": i64_array([0] * v.rank)}
    return b.op("pad", [v, value], shape, v.elem, attrs)


def dynamic_update_slice(b: Builder, v: Local, update: Local, starts) -> Local:
    """`v` with `update` written at the scalar start indices `starts` (one per dim)."""
    return b.op("dynamic_update_slice", [v, update, *starts], v.shape, v.elem)


def dynamic_slice(b: Builder, v: Local, starts, sizes) -> Local:
    """The window of `sizes` at the scalar start indices `starts` (one per dim)."""
    if tuple(sizes) == v.shape:
        return v
    return b.op("dynamic_slice", [v, *starts], sizes, v.elem, {"slice_sizes": i64_array(sizes)})


# -- reductions -------------------------------------------------------------------------------
REDUCTION_OPS = {"sum": "add", "max": "maximum", "min": "minimum", "prod": "multiply"}


def reduction_region(b: Builder, kind: str, elem: str) -> str:
    """The body `(a, b) -> a (+|max|min) b` of reduce, all_reduce and reduce_scatter."""
    scalar = tensor_text((), elem)
    x, y, r = b.fresh(), b.fresh(), b.fresh()
    return (
        f"{{\n^bb0({x}: {scalar}, {y}: {scalar}):\n"
        f'  {r} = "stablehlo.{REDUCTION_OPS[kind]}"({x}, {y}) : ({scalar}, {scalar}) -> {scalar}\n'
        f'  "stablehlo.return"({r}) : ({scalar}) -> ()\n}}'
    )


def reduction_identity(kind: str, elem: str):
    """The init value: 0 for sums, 1 for products, the lowest / highest value for max / min."""
    if kind in ("sum", "prod"):
        return int(kind == "prod")
    if elem == "i1":
        return kind == "min"
    if is_float(elem):
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(_NUMPY[elem])
    return info.min if kind == "max" else info.max


def reduce(b: Builder, v: Local, axes, kind: str) -> Local:
    """Reduce `v` over `axes` (kept dims stay in their order)."""
    axes = sorted(axes)
    if not axes:
        return v
    init = constant(b, reduction_identity(kind, v.elem), v.elem)
    shape = [s for i, s in enumerate(v.shape) if i not in axes]
    region = reduction_region(b, kind, v.elem)
    return b.op("reduce", [v, init], shape, v.elem, {"dimensions": i64_array(axes)}, region)
