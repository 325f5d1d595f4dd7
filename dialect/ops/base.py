"""The `mtf` dialect class and the base of every op class.

Each op class declares its arity (`OPERANDS`), its attributes (`ATTRIBUTES`: name -> kind,
with optional ones in `OPTIONAL`), and a `verify_op(mesh)` that raises VerifyError. The base
checks arity, attribute kinds and that every operand and result is an `!mtf.tensor`, so the
per-op verifiers only state their own rules.
"""
from __future__ import annotations

import math

from meshir._jax_private import ir, register_dialect, register_operation

from ..diagnostics import VerifyError
from ..mesh import Mesh
from ..tensor_type import TensorType, TypeContentError, TypeSyntaxError, format_axes

#: Every registered op class, by operation name (`mtf.einsum` -> EinsumOp).
OP_CLASSES: dict[str, type["MtfOp"]] = {}



@register_dialect
class MtfDialect(ir.Dialect):
    """The `mtf` namespace: named-dimension tensors and their ops."""

    DIALECT_NAMESPACE = "mtf"


def mtf_op(cls):
    """Register an op class for its OPERATION_NAME (MLIR's and ours)."""
    cls._ODS_REGIONS = (cls.REGIONS, True)
    register_operation(MtfDialect)(cls)
    OP_CLASSES[cls.OPERATION_NAME] = cls
    return cls


def _attr_kind_ok(kind: str, attr: ir.Attribute) -> bool:
    checks = {
        "str": lambda a: isinstance(_try(ir.StringAttr, a), ir.StringAttr),
        "int": lambda a: isinstance(_try(ir.IntegerAttr, a), ir.IntegerAttr),
        "float": lambda a: isinstance(_try(ir.FloatAttr, a), ir.FloatAttr)
        or isinstance(_try(ir.IntegerAttr, a), ir.IntegerAttr),
        "bool": lambda a: isinstance(_try(ir.BoolAttr, a), ir.BoolAttr),
        "axes": _string_array,
        "dims": _string_array,
        "any": lambda a: True,
    }
    return checks[kind](attr)


def _string_array(attr) -> bool:
    return isinstance(_try(ir.ArrayAttr, attr), ir.ArrayAttr) and \
        all(isinstance(_try(ir.StringAttr, e), ir.StringAttr) for e in ir.ArrayAttr(attr))


def _try(cls, attr):
    """`attr` as a `cls` attribute, or None. The bindings hand attributes out as their
    concrete class, so its type answers most questions; a conversion across families
    (a string as a float) is answered without the exception the bindings raise for it, which
    costs ten times the check (the verifier asks this of every constant, pass after pass).
    Within a family the bindings convert (a subclass to `cls` itself, whose methods differ:
    a DenseFPElementsAttr refuses NumPy's buffer for bf16, a DenseElementsAttr does not; an
    i1 IntegerAttr is also a BoolAttr)."""
    if type(attr) is cls:
        return attr
    have, want = _ATTR_FAMILY.get(type(attr)), _ATTR_FAMILY.get(cls)
    if have is not None and want is not None and have != want:
        return None
    try:
        return cls(attr)
    except (ValueError, TypeError):
        return None


#: Attribute classes that never convert into one another across families.
_ATTR_FAMILY = {
    ir.StringAttr: "string", ir.FloatAttr: "float", ir.IntegerAttr: "integer", ir.BoolAttr: "integer",
    ir.ArrayAttr: "array", ir.DenseElementsAttr: "dense", ir.DenseIntElementsAttr: "dense",
    ir.DenseFPElementsAttr: "dense",
}


#: LINEAR of the ops that only move or copy elements: a pending value of any kind stays
#: pending through them when every operand is pending alike.
MOVE = {"sum": "alike", "max": "alike", "min": "alike"}

#: The bytes an op sends per device, recorded by mtf-insert-collectives on every collective
#: and on an op that exchanges halos.
BYTES = {"bytes_per_device": "int"}


KIND_TEXT = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "axes": "an array of mesh axis names",
    "dims": "an array of dim names",
    "any": "an attribute",
}


class MtfOp(ir.OpView):
    """Base of all `mtf` ops: generic builder, typed accessors, common verification."""

    OPERATION_NAME = "mtf.op"
    _ODS_REGIONS = (0, True)
    #: (min, max) operand count; max None means unbounded.
    OPERANDS: tuple[int, int | None] = (1, 1)
    #: Attribute name -> kind (str, int, float, bool, axes, any).
    ATTRIBUTES: dict[str, str] = {}
    #: Attribute names among ATTRIBUTES that may be omitted.
    OPTIONAL: frozenset[str] = frozenset()

    #: Number of results (ops such as top_k or sort have several; `result_types` lists them);
    #: None: one or more, as the op's types say (`mtf.split`: one result per piece). A rule
    #: gives (a VJP takes) one value for an op with one result, else a list of one per result.
    RESULTS: int | None = 1
    #: Number of regions (loops and calls that carry a body have one).
    REGIONS = 0
    #: Ends a region's block (`mtf.yield`); no other mtf op may end a block.
    TERMINATOR = False
    #: `verify` reads only what the op states (name, operand and result types, attributes),
    #: so the verifier answers an op equal to one it verified before from memory
    #: (dialect/verdicts.py); False for an op whose rules read its surroundings.
    VERIFY_READS_ONLY_ITSELF = True

    # -- traits: what the op is, read by every layer (verifier, API, autodiff, propagation,
    # collective insertion, partitioned form, lowering) instead of lists of op names ----------
    #: A collective: a global identity that changes the layout (see ops/collectives.py).
    IS_COLLECTIVE = False
    #: A layout constraint or collective: it relays layouts, propagation never reshards it.
    CHANGES_LAYOUT = False
    #: How propagation relates the dims of operands and result (Shardy's factors):
    #: "by_name" (one factor per name), "positional" (rename: position i to position i),
    #: "reshape" (groups of dims with equal element counts), "none" (each value apart).
    FACTORS = "by_name"
    #: Attributes naming dims the op computes along (cuts, joins, shifts): such a dim must be
    #: whole on every device in the partitioned form, unless `halos()` lets it stay split.
    WHOLE_DIM_ATTRS: tuple[str, ...] = ()
    #: Attributes naming dims whose operand and result index spaces differ, so a layout does
    #: not pass through them in propagation (slice, concat, pad; a collective's changed dims).
    UNLINKED_DIM_ATTRS: tuple[str, ...] = ()
    #: Attributes naming result dims cut into pieces of any size (split): a layout rule whose
    #: axes do not divide a piece's size leaves that piece's dim without them (propagation).
    PIECE_DIM_ATTRS: tuple[str, ...] = ()
    #: Attributes naming dims of the first operand looked up by index (gather): split over
    #: axes A, the local lookup leaves the result pending over A.
    LOOKUP_DIM_ATTRS: tuple[str, ...] = ()
    #: The reduction over operand names absent from the result ("sum", "max", "min"), if any:
    #: reduced while split over axes A, the local result is pending over A.
    REDUCTION: str | None = None
    #: The arithmetic the op does, for the cost model's FLOPs (auto-layout): None (moves or
    #: makes data only), "result" (one op per result element: elementwise), "operand" (one
    #: per operand element: a reduction), "index_space" (a multiply and an add per point of
    #: the joint index space of operands and result: a contraction).
    WORK: str | None = None
    #: Pending reduction kind -> how a pending operand may stay pending through this op
    #: (docs/partitioning.md, "Linear uses"); see dialect/linearity.py for the rule names.
    LINEAR: dict[str, str] = {}
    #: The element type the op computes in under a mixed-precision policy (mi.Precision,
    #: transforms/passes/precision.py): "follow" (the widest of its float operands, the result's
    #: float type with them), "compute" (the policy's narrow type: contractions), "range"
    #: (float32: exp, log, rsqrt, sums, whose results need range), "declared" (the types as
    #: written: casts, loops, yields), "weak" (a made value that takes the type of what it
    #: meets, like a JAX weak type: constants, iota, random values).
    PRECISION = "follow"
    #: What the op's result costs in memory once XLA has fused, for the liveness walk of the
    #: memory estimate (transforms/analysis/memory_estimate.py; the layout search's too):
    #: "buffer" (a buffer of its own), "fused" (XLA fuses it into its users: a buffer only when
    #: a user materializes its operands or several ops read it, and then it may take over an
    #: operand's buffer that dies there, of the same size: elementwise and layout-only ops,
    #: constants, iota), "materializes_operands" (a buffer, and a fused value it reads becomes
    #: one: contractions, gather, collectives, a loop's yield; an op with a body does so too),
    #: "in_place" (materializes its operands and, like a fused op, takes over a dying operand's
    #: buffer; returned, it computes in the output's buffer, so an operand used only there is
    #: no temporary: all_reduce).
    MEMORY = "buffer"

    def whole_dims(self) -> list[str]:
        """The dims named by WHOLE_DIM_ATTRS."""
        return [self.attr(a) for a in self.WHOLE_DIM_ATTRS]

    def kept_split_values(self) -> tuple[frozenset[int], frozenset[int]]:
        """(operand indices, result indices) that keep the whole dims split, because the op
        itself merges or writes their blocks (a dynamic slice's operand; a dynamic update's
        operand and result); none by default. A kept result takes its first kept operand's
        layout of those dims."""
        return frozenset(), frozenset()

    #: For an op with `merged_dims`: the collective kind and the detail (what it moves) the
    #: compile report lists for its merge.
    MERGE_KIND = "all_gather"
    MERGED = ""

    def merged_dims(self) -> list[str]:
        """Dims the op computes along while they stay split, merging what each device found
        with a collective of its own (a selection's candidates, a scan's block totals, a
        slice's window); none by default."""
        return []

    def merge_bytes(self, operand: TensorType, mesh_shape: dict[str, int]) -> int:
        """Bytes one device sends for that merge, given the operand's type; 0 by default."""
        return 0

    def halos(self) -> dict[str, tuple[int, int]]:
        """Whole dims the op reads only near each position (a shift, later a window), each
        with its reach `(low, high)`: the rows before and after a block its computation reads.
        Such a dim may stay split when the neighbouring blocks send those rows (a halo
        exchange, dialect/halo.py); none by default."""
        return {}

    def unlinked_dims(self) -> set[str]:
        """The dims named by UNLINKED_DIM_ATTRS (a collective: the dims it changes)."""
        return {self.attr(a) for a in self.UNLINKED_DIM_ATTRS}

    def piece_dims(self) -> list[str]:
        """The dims named by PIECE_DIM_ATTRS."""
        return [self.attr(a) for a in self.PIECE_DIM_ATTRS]

    def lookup_dims(self) -> list[str]:
        return [self.attr(a) for a in self.LOOKUP_DIM_ATTRS]

    def linear_rules(self) -> dict[str, str]:
        """LINEAR, unless the op's attributes decide otherwise (pad with a non-zero value)."""
        return self.LINEAR

    def __init__(self, result_type, operands, attributes=None, *, loc=None, ip=None):
        """`result_type`: one type, or a list of RESULTS types (TensorType or MLIR types)."""
        types = result_type if isinstance(result_type, (list, tuple)) else [result_type]
        types = [t.to_mlir() if isinstance(t, TensorType) else t for t in types]
        super().__init__(
            self.build_generic(
                results=types,
                operands=list(operands),
                attributes=dict(attributes or {}),
                regions=self.REGIONS,
                loc=loc,
                ip=ip,
            )
        )

    # -- accessors -----------------------------------------------------------------------
    @property
    def short_name(self) -> str:
        return self.OPERATION_NAME.split(".", 1)[1]

    @property
    def input(self) -> ir.Value:
        return self.operation.operands[0]

    @property
    def inputs(self) -> list[ir.Value]:
        return list(self.operation.operands)

    @property
    def result_type(self) -> TensorType:
        return tensor_type_of(self.result, "result")

    @property
    def result_types(self) -> list[TensorType]:
        results = self.operation.results
        return [tensor_type_of(v, "result" if len(results) == 1 else f"result #{i}") for i, v in enumerate(results)]

    @property
    def operand_types(self) -> list[TensorType]:
        return [tensor_type_of(v, f"operand #{i}") for i, v in enumerate(self.operation.operands)]

    @property
    def input_type(self) -> TensorType:
        return self.operand_types[0]

    @classmethod
    def infer_result_type(cls, operand_types: list[TensorType], attrs: dict) -> TensorType:
        """The result type from the operand types and attributes (Python values), for ops
        whose result type follows from them; VerifyError when the operands do not fit."""
        raise NotImplementedError(f"{cls.OPERATION_NAME} does not infer its result type")

    def attribute_values(self) -> dict:
        """Every attribute the op declares, as Python values (defaults for absent ones)."""
        return {name: self.attr(name) for name in self.ATTRIBUTES}

    def attr(self, name: str):
        """The Python value of attribute `name` (or its default when optional and absent)."""
        attrs = self.operation.attributes
        if name not in attrs:
            return self.DEFAULTS.get(name) if hasattr(self, "DEFAULTS") else None
        return attribute_value(self.ATTRIBUTES.get(name, "any"), attrs[name])

    # -- verification ----------------------------------------------------------------------
    def verify(self, mesh: Mesh | None) -> None:
        """Check arity, attributes and types, then the op's own rules. Raises VerifyError."""
        self._verify_arity()
        self._verify_attributes()
        for t in self.operand_types + self.result_types:
            check_type_on_mesh(t, mesh)
        self.verify_op(mesh)

    def verify_op(self, mesh: Mesh | None) -> None:
        """The op's own rules; overridden by op classes."""

    def _verify_arity(self) -> None:
        lo, hi = self.OPERANDS
        n = len(self.operation.operands)
        if n < lo or (hi is not None and n > hi):
            want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            raise VerifyError(f"expects {want} operand{'s' if hi != 1 or lo != hi else ''}, got {n}")
        if self.RESULTS is None:
            if not self.operation.results:
                raise VerifyError("expects at least one result, got 0")
        elif len(self.operation.results) != self.RESULTS:
            raise VerifyError(f"expects {self.RESULTS} result{'s' if self.RESULTS != 1 else ''}, "
                              f"got {len(self.operation.results)}")
        if len(self.operation.regions) != self.REGIONS:
            raise VerifyError(f"expects {self.REGIONS} region{'s' if self.REGIONS != 1 else ''}, "
                              f"got {len(self.operation.regions)}")

    def _verify_attributes(self) -> None:
        attrs = self.operation.attributes
        for name, kind in self.ATTRIBUTES.items():
            if name not in attrs:
                if name not in self.OPTIONAL:
                    raise VerifyError(f"requires attribute '{name}' ({KIND_TEXT[kind]})")
            elif not _attr_kind_ok(kind, attrs[name]):
                raise VerifyError(f"attribute '{name}' must be {KIND_TEXT[kind]}, got {attrs[name]}")

    def dim_attr(self, name: str, t: TensorType, what: str = "operand") -> str:
        """A string attribute naming a dimension of `t`; VerifyError if `t` has none such."""
        dim = self.attr(name)
        if not t.has(dim):
            raise VerifyError(f"{name} '{dim}' is not a dimension of the {what} {t}")
        return dim

    def axes_on_mesh(self, axes: tuple[str, ...], mesh: Mesh | None) -> None:
        if not axes:
            raise VerifyError("attribute 'axes' must name at least one mesh axis")
        if len(set(axes)) != len(axes):
            raise VerifyError(f"mesh axis used twice in axes {format_axes(axes)}")
        if mesh is not None:
            for a in axes:
                if a not in mesh.shape:
                    raise VerifyError(f"unknown mesh axis '{a}' (mesh @{mesh.name} has {mesh.format_axes()})")

    # -- canonicalization (mtf-canonicalize) -------------------------------------------------
    #: Pure: the result is a function of the operands, attributes and result type only, and
    #: the op has no other effect. mtf-canonicalize merges identical pure ops (CSE) and erases
    #: pure ops whose results are unused (DCE); an op with an effect sets PURE = False.
    PURE: bool = True

    def fold(self) -> ir.Value | None:
        """A value that computes exactly what this op's result does (an operand, or the result
        of a simpler op built before this one), or None. Only bit-exact rewrites, for every
        input (NaN, inf and -0.0 included), and the value must have the result's full type
        (layouts and pending `partial` included)."""
        return None


def attribute_value(kind: str, attr: ir.Attribute):
    """Python value of an attribute of the given kind."""
    if kind == "str":
        return ir.StringAttr(attr).value
    if kind == "int":
        return ir.IntegerAttr(attr).value
    if kind == "bool":
        return ir.BoolAttr(attr).value
    if kind == "float":
        f = _try(ir.FloatAttr, attr)
        return f.value if f is not None else float(ir.IntegerAttr(attr).value)
    if kind in ("axes", "dims"):
        return tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attr))
    return attr


def tensor_type_of(value: ir.Value, what: str) -> TensorType:
    """The TensorType of a value; VerifyError (with the text position) when it is not one."""
    try:
        return TensorType.from_mlir(value.type)
    except TypeSyntaxError as e:
        raise VerifyError(f"{what} has a malformed type: {e}") from None
    except TypeContentError as e:
        raise VerifyError(f"{what}: {e}") from None


def check_type_on_mesh(t: TensorType, mesh: Mesh | None) -> None:
    """Every axis exists on the mesh and every split divides its dimension."""
    if mesh is None:
        if t.used_axes_list():
            raise VerifyError(f"type {t} uses mesh axes but the function has no mesh (set mtf.mesh)")
        return
    for axis in t.used_axes_list():
        if axis not in mesh.shape:
            raise VerifyError(f"unknown mesh axis '{axis}' in {t} (mesh @{mesh.name} has {mesh.format_axes()})")
    try:
        t.local_shape(mesh.shape)
    except TypeContentError as e:
        raise VerifyError(f"{e} in {t} on mesh @{mesh.name} {mesh.format_axes()}") from None


def same_sizes(types: list[TensorType], what: str = "operands") -> dict[str, int]:
    """Name -> size over several types; VerifyError when one name has two sizes."""
    sizes: dict[str, int] = {}
    for t in types:
        for d in t.dims:
            if sizes.setdefault(d.name, d.size) != d.size:
                raise VerifyError(f"dimension '{d.name}' has sizes {sizes[d.name]} and {d.size} among the {what}")
    return sizes


def same_element_type(types: list[TensorType], what: str = "operands") -> str:
    elems = {t.element_type for t in types}
    if len(elems) > 1:
        raise VerifyError(f"{what} must have one element type, got {', '.join(sorted(elems))}")
    return types[0].element_type


def shard_along(t: TensorType, dim: str, mesh_shape: dict[str, int]) -> tuple[int, int, int]:
    """(devices that split `dim` of `t`, the shard's size along `dim`, the shard's elements
    on the other dims): what a merge along a split dim moves per device is priced from."""
    local = t.local_shape(mesh_shape)
    n = math.prod(mesh_shape[a] for a in t.dim(dim).axes or ())
    others = math.prod(s for d, s in zip(t.dims, local) if d.name != dim)
    return n, local[t.index(dim)], others


def names_text(names) -> str:
    return "[" + ", ".join(names) + "]"


# -- helpers of the op classes' `fold` methods ---------------------------------------------------
def same_type_operand(op: MtfOp, index: int = 0) -> ir.Value | None:
    """Operand `index` when its type is the result's full type (layouts, partial), else None."""
    operand = op.operation.operands[index]
    return operand if operand.type == op.operation.results[0].type else None


def producer(value: ir.Value, op_class: type) -> MtfOp | None:
    """The op of class `op_class` whose result `value` is, or None (a block argument, another op)."""
    owner = value.owner
    return owner if isinstance(owner, op_class) else None


def layout_free(t: TensorType) -> bool:
    """No layout stated for any dim and nothing pending: dropping the type loses no layout fact."""
    return not t.partial and all(d.axes is None for d in t.dims)


def replicated(t: TensorType) -> bool:
    """Every dim stated whole on every device (`@()`) and nothing pending."""
    return not t.partial and all(d.axes == () for d in t.dims)
