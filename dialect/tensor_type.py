"""`!mtf.tensor<...>`: a tensor with named dimensions, an optional layout and partial-sum axes.

Grammar (docs/ir-reference.md):

    type    ::= '!mtf.tensor<' (dim ',')* elem (',' partial '@' axes)? '>'
    partial ::= 'partial' | 'partial_max' | 'partial_min'
    dim     ::= name '=' size ('@' axes)?
    axes    ::= name | '(' (name (',' name)*)? ')'
    elem    ::= f32 | bf16 | f16 | f64 | i32 | i64 | i1

A dim without `@` has a free layout (propagation decides); `@()` pins it replicated.
`partial@y` marks a pending sum over mesh axis y (each device holds a summand);
`partial_max@y` / `partial_min@y` a pending max / min (see docs/decisions.md).
The type lives in MLIR as an opaque type of the `mtf` dialect; this module is its parser,
printer and Python face.
"""
from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from meshir._jax_private import ir

from .diagnostics import MeshIRValueError

#: Partial reduction -> keyword in the type text.
PARTIAL_KEYWORDS = {"sum": "partial", "max": "partial_max", "min": "partial_min"}

@functools.cache
def bfloat16() -> np.dtype:
    """NumPy's dtype for bf16 (ml_dtypes'). Imported on first use, not at module level:
    ml_dtypes registers its casts with NumPy when imported (0.1 s, 0.9 s with NumPy 2.4),
    which parsing, verifying and printing IR never need (`meshir-opt`'s start-up)."""
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


class _ElementTypes(Mapping):
    """Element type name -> NumPy dtype: a read-only dict whose bf16 dtype is made when first
    looked up (`bfloat16()`)."""

    def __init__(self, dtypes: dict):
        self._dtypes = dtypes

    def __getitem__(self, name: str) -> np.dtype:
        dtype = self._dtypes[name]
        return bfloat16() if dtype is None else dtype

    def __iter__(self):
        return iter(self._dtypes)

    def __len__(self) -> int:
        return len(self._dtypes)

    def __repr__(self) -> str:
        return repr(dict(self))


ELEMENT_TYPES: Mapping[str, np.dtype] = _ElementTypes({
    "f32": np.dtype(np.float32),
    "bf16": None,  # bfloat16(), on first lookup
    "f16": np.dtype(np.float16),
    "f64": np.dtype(np.float64),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_),
})
FLOAT_TYPES = frozenset({"f32", "bf16", "f16", "f64"})
_FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def wider_floats(element_type: str) -> tuple[str, ...]:
    """The float types wider than the float `element_type`, narrowest first (what it converts
    to exactly; none for a non-float)."""
    if element_type not in FLOAT_TYPES:
        return ()
    width = _FLOAT_BITS[element_type]
    return tuple(sorted((f for f in FLOAT_TYPES if _FLOAT_BITS[f] > width), key=lambda f: _FLOAT_BITS[f]))
INTEGER_TYPES = frozenset({"i32", "i64"})

#: Sizes, element and byte counts must fit XLA's int64 shapes (larger ones abort it).
INT64_MAX = 2**63 - 1

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIZE = re.compile(r"[0-9]+")
_PREFIX = "!mtf.tensor<"


class TypeSyntaxError(MeshIRValueError):
    """Malformed type text; `column` is 1-based within `text`. (A MeshIRError: users reach it
    through TensorType.parse.)"""

    def __init__(self, text: str, column: int, expected: str):
        self.text, self.column, self.expected = text, column, expected
        super().__init__(f"malformed type '{text}' at column {column}: expected {expected}")

    def render(self) -> str:
        """The message with the text and a caret under the offending column."""
        return f"{self}\n  {self.text}\n  {' ' * (self.column - 1)}^"


class TypeContentError(MeshIRValueError):
    """Well-formed text describing an impossible type (a name twice, an axis twice...)."""


@dataclass(frozen=True)
class Dimension:
    """One named dimension: `name=size`, with `axes` None (free) or a tuple of mesh axes."""

    name: str
    size: int
    axes: tuple[str, ...] | None = None

    def __str__(self) -> str:
        text = f"{self.name}={self.size}"
        if self.axes is not None:
            text += "@" + format_axes(self.axes)
        return text


def format_axes(axes: tuple[str, ...]) -> str:
    """`x` for one axis, `(x,y)` for several, `()` for none."""
    return axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")"


#: ir.Type -> TensorType. The passes and the verifier read each value's type several times
#: per pass, and reading an opaque type through the bindings costs five times this lookup.
#: MLIR uniques types per context, so equal keys are the same type; a key holds its context
#: alive, so its address cannot be reused by another type.
_FROM_MLIR: dict = {}
_FROM_MLIR_LIMIT = 8192

#: The (dims, element type, partial, reduction) of every type that passed its checks.
_VALID: set = set()
_VALID_LIMIT = 65536


@dataclass(frozen=True)
class TensorType:
    """A named tensor type. Dimension order is the physical order."""

    dims: tuple[Dimension, ...]
    element_type: str
    partial: tuple[str, ...] = ()
    partial_reduction: str = "sum"

    def __post_init__(self):
        # The passes build the same few hundred types tens of thousands of times (a layout
        # changed, then changed back): check each distinct one once.
        key = (self.dims, self.element_type, self.partial, self.partial_reduction)
        if key in _VALID:
            return
        self._check()
        if len(_VALID) >= _VALID_LIMIT:
            _VALID.clear()
        _VALID.add(key)

    def _check(self) -> None:
        if self.partial_reduction not in PARTIAL_KEYWORDS:
            raise TypeContentError(f"unknown partial reduction '{self.partial_reduction}' (sum, max, min)")
        if self.element_type not in ELEMENT_TYPES:
            raise TypeContentError(
                f"unknown element type '{self.element_type}' "
                f"(expected one of {', '.join(ELEMENT_TYPES)})"
            )
        seen: set[str] = set()
        for dim in self.dims:
            if dim.name in seen:
                raise TypeContentError(f"dimension name '{dim.name}' appears twice in {self}")
            seen.add(dim.name)
            if dim.size <= 0:
                raise TypeContentError(f"dimension '{dim.name}' has size {dim.size}; sizes must be positive")
            if dim.size > INT64_MAX:
                raise TypeContentError(f"dimension '{dim.name}' has size {dim.size}, more than int64 holds ({INT64_MAX})")
        elements = self.num_elements
        if elements > INT64_MAX:
            raise TypeContentError(f"{self} has {elements} elements, more than int64 can count ({INT64_MAX})")
        if elements * self.dtype.itemsize > INT64_MAX:
            raise TypeContentError(
                f"{self} has {elements * self.dtype.itemsize} bytes, more than int64 can count ({INT64_MAX})")
        axes = self.used_axes_list()
        for axis in set(axes):
            if axes.count(axis) > 1:
                raise TypeContentError(f"mesh axis '{axis}' is used more than once in {self}")

    # -- construction -----------------------------------------------------------------
    @staticmethod
    def make(dims, element_type: str = "f32", partial=(), partial_reduction: str = "sum") -> "TensorType":
        """From `[(name, size)]`, `[(name, size, axes)]` or Dimension objects."""
        built = []
        for d in dims:
            if isinstance(d, Dimension):
                built.append(d)
            else:
                axes = d[2] if len(d) > 2 else None
                built.append(Dimension(d[0], int(d[1]), normalize_axes(axes)))
        return TensorType(tuple(built), element_type, tuple(partial), partial_reduction)

    @staticmethod
    def parse(text: str) -> "TensorType":
        """Parse `!mtf.tensor<...>` (or the bare `tensor<...>` opaque data)."""
        return _parse_cached(text.strip())

    @staticmethod
    def from_mlir(t: ir.Type) -> "TensorType":
        """The TensorType of an MLIR type; ValueError if it is not an `!mtf.tensor`."""
        found = _FROM_MLIR.get(t)
        if found is not None:
            return found
        if t.typeid != ir.OpaqueType.static_typeid:
            raise TypeContentError(f"expected an !mtf.tensor type, got {t}")
        opaque = ir.OpaqueType(t)
        if opaque.dialect_namespace != "mtf":
            raise TypeContentError(f"expected an !mtf.tensor type, got {t}")
        found = _parse_cached("!mtf." + opaque.data)
        if len(_FROM_MLIR) >= _FROM_MLIR_LIMIT:
            _FROM_MLIR.clear()
        _FROM_MLIR[t] = found
        return found

    def to_mlir(self) -> ir.Type:
        """The MLIR opaque type (needs an active context)."""
        return ir.OpaqueType.get("mtf", str(self)[len("!mtf."):])

    # -- accessors -------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(d.size for d in self.dims)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def dtype(self) -> np.dtype:
        return ELEMENT_TYPES[self.element_type]

    @property
    def num_elements(self) -> int:
        """Exact (Python int): numpy's int64 product would wrap around for huge shapes."""
        return math.prod(self.shape)

    @property
    def layout(self) -> dict[str, tuple[str, ...] | None]:
        """Name -> axes (None where the layout is free)."""
        return {d.name: d.axes for d in self.dims}

    @property
    def is_float(self) -> bool:
        return self.element_type in FLOAT_TYPES

    @property
    def is_integer(self) -> bool:
        return self.element_type in INTEGER_TYPES

    def has(self, name: str) -> bool:
        return any(d.name == name for d in self.dims)

    def dim(self, name: str) -> Dimension:
        for d in self.dims:
            if d.name == name:
                return d
        raise KeyError(f"no dimension '{name}' in {self}")

    def index(self, name: str) -> int:
        return self.names.index(name)

    def size(self, name: str) -> int:
        return self.dim(name).size

    def used_axes_list(self) -> list[str]:
        """Every mesh axis the type uses, dims first, then partial (with repeats)."""
        axes = [a for d in self.dims for a in (d.axes or ())]
        return axes + list(self.partial)

    def local_shape(self, mesh_axes: dict[str, int]) -> tuple[int, ...]:
        """The shape of one device's shard on a mesh `{axis: size}`."""
        shape = []
        for d in self.dims:
            split = 1
            for a in d.axes or ():
                if a not in mesh_axes:
                    raise TypeContentError(f"unknown mesh axis '{a}' in dimension '{d.name}'")
                split *= mesh_axes[a]
            if d.size % split:
                raise TypeContentError(
                    f"dimension '{d.name}' of size {d.size} is not divisible by "
                    f"{split} (mesh axes {format_axes(d.axes)})"
                )
            shape.append(d.size // split)
        return tuple(shape)

    # -- derived types -----------------------------------------------------------------
    def with_element_type(self, element_type: str) -> "TensorType":
        return replace(self, element_type=element_type)

    def with_partial(self, partial, reduction: str | None = None) -> "TensorType":
        partial = tuple(partial)
        reduction = reduction or (self.partial_reduction if partial else "sum")
        return replace(self, partial=partial, partial_reduction=reduction if partial else "sum")

    def with_dims(self, dims) -> "TensorType":
        # The constructor, not dataclasses.replace (which reads the fields anew on every call):
        # the passes make tens of thousands of these in a large program.
        return type(self)(tuple(dims), self.element_type, self.partial, self.partial_reduction)

    def with_layout(self, layout: dict[str, tuple[str, ...] | None]) -> "TensorType":
        """Replace the axes of the dims named in `layout`."""
        return self.with_dims(
            Dimension(d.name, d.size, normalize_axes(layout[d.name])) if d.name in layout else d
            for d in self.dims
        )

    def without_layout(self) -> "TensorType":
        """Same names, sizes and element type; every layout free, no partial."""
        return TensorType(tuple(Dimension(d.name, d.size) for d in self.dims), self.element_type)

    def without_partial(self) -> "TensorType":
        return replace(self, partial=(), partial_reduction="sum")

    def same_shape(self, other: "TensorType") -> bool:
        """Same names and sizes in the same order (layouts and element types ignored)."""
        return self.names == other.names and self.shape == other.shape

    def __str__(self) -> str:
        parts = [str(d) for d in self.dims] + [self.element_type]
        if self.partial:
            parts.append(PARTIAL_KEYWORDS[self.partial_reduction] + "@" + format_axes(self.partial))
        return _PREFIX + ", ".join(parts) + ">"


def normalize_axes(axes) -> tuple[str, ...] | None:
    """None stays free; a string is one axis; a sequence is several."""
    if axes is None:
        return None
    if isinstance(axes, str):
        return (axes,)
    return tuple(axes)


class _Parser:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def fail(self, expected: str):
        raise TypeSyntaxError(self.text, self.pos + 1, expected)

    def skip_space(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, literal: str) -> bool:
        self.skip_space()
        return self.text.startswith(literal, self.pos)

    def expect(self, literal: str):
        if not self.peek(literal):
            self.fail(f"'{literal}'")
        self.pos += len(literal)

    def token(self, pattern: re.Pattern, what: str) -> str:
        self.skip_space()
        match = pattern.match(self.text, self.pos)
        if not match:
            self.fail(what)
        self.pos = match.end()
        return match.group(0)

    def axes(self) -> tuple[str, ...]:
        if not self.peek("("):
            return (self.token(_NAME, "a mesh axis name or '('"),)
        self.expect("(")
        names: list[str] = []
        if self.peek(")"):
            self.pos += 1
            return ()
        while True:
            names.append(self.token(_NAME, "a mesh axis name"))
            if self.peek(")"):
                self.pos += 1
                return tuple(names)
            self.expect(",")

    def parse(self) -> TensorType:
        start = "!mtf.tensor<" if self.peek("!") else "tensor<"
        self.expect(start)
        dims: list[Dimension] = []
        while True:
            name_pos = self.pos
            name = self.token(_NAME, "a dimension name or an element type")
            if not self.peek("="):
                self.pos = name_pos
                break
            self.expect("=")
            size = int(self.token(_SIZE, "a dimension size (a positive integer)"))
            axes = None
            if self.peek("@"):
                self.pos += 1
                axes = self.axes()
            dims.append(Dimension(name, size, axes))
            self.expect(",")
        self.skip_space()
        elem_pos = self.pos
        element_type = self.token(_NAME, "an element type")
        if element_type not in ELEMENT_TYPES:
            self.pos = elem_pos
            self.fail("an element type (" + ", ".join(ELEMENT_TYPES) + ")")
        partial: tuple[str, ...] = ()
        reduction = "sum"
        if self.peek(","):
            self.pos += 1
            self.skip_space()
            keyword_pos = self.pos
            keyword = self.token(_NAME, "'partial', 'partial_max' or 'partial_min'")
            by_keyword = {k: r for r, k in PARTIAL_KEYWORDS.items()}
            if keyword not in by_keyword:
                self.pos = keyword_pos
                self.fail("'partial', 'partial_max' or 'partial_min'")
            reduction = by_keyword[keyword]
            self.expect("@")
            partial = self.axes()
            if not partial:
                self.fail("at least one mesh axis after 'partial@'")
        self.expect(">")
        self.skip_space()
        if self.pos != len(self.text):
            self.fail("end of type")
        return TensorType(tuple(dims), element_type, partial, reduction)


@functools.lru_cache(maxsize=65536)
def _parse_cached(text: str) -> TensorType:
    return _Parser(text).parse()
