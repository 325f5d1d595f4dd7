"""`mtf.shard` and the collectives. All work on global types: in global semantics each is the
identity; what they change is the layout (or the pending partial reduction), and each verifier
checks that the operand->result layout change is the one the collective performs."""
from __future__ import annotations

import functools

from ..diagnostics import VerifyError
from ..tensor_type import TensorType, format_axes
from .base import BYTES, OP_CLASSES, MtfOp, mtf_op

REDUCTIONS = ("sum", "max", "min")


def _axes(t: TensorType, name: str) -> tuple[str, ...]:
    return t.dim(name).axes or ()


def _layout_text(t: TensorType, name: str) -> str:
    return f"'{name}'@{format_axes(_axes(t, name))}"


class _GlobalIdentityOp(MtfOp):
    """Operand and result have the same names, sizes and element type."""

    def _check_same_tensor(self):
        src, result = self.input_type, self.result_type
        if not src.same_shape(result):
            raise VerifyError(f"operand {src} and result {result} must have the same dimensions")
        if src.element_type != result.element_type:
            raise VerifyError(f"result element type must be {src.element_type}, got {result.element_type}")
        return src, result

    def _check_unchanged_except(self, src, result, changed: set[str]):
        for d, r in zip(src.dims, result.dims):
            if d.name not in changed and (d.axes or ()) != (r.axes or ()):
                raise VerifyError(f"{self.short_name} may not change the layout of '{d.name}'")


@mtf_op
class ShardOp(_GlobalIdentityOp):
    """`mtf.shard`: constrain a value to the layout its result type states.

    `reshard = true` marks one left by propagation where two layouts meet; unlike a user's
    constraint, two of those on one value may differ.

    `cut = ["d", ...]` names dims through which no layout propagates: each side is laid
    out by its own ops and the change is resharded here. `mi.reshard` writes one (a
    gather where the user wants it, without the gathered layout spreading back to the
    operand); autodiff cuts every dim where a scan's backward pass reads the carry it saved
    (the saved stack keeps the carry's layout, a sequence-parallel carry stays split).

    `param = "w"` with a `cut` marks a boundary of weight-update or parameter sharding
    (`mi.train_step(shard_update=...)`) on parameter `w`, its gradient or its optimizer
    state, cut on the dim the update is split over: the update's layout never reaches the
    forward and backward ops, nor theirs the update; collective insertion turns the change
    into the reduce_scatter, all_slice or all_gather. With `param_layout = "compute" |
    "update" | "stored"` instead, it waits for `mtf-shard-update` to choose that dim and
    its layout once the rules are known (the result type stays free until then).
    """

    OPERATION_NAME = "mtf.shard"
    CHANGES_LAYOUT = True
    ATTRIBUTES = {"reshard": "bool", "cut": "dims", "param": "str", "param_layout": "str"}
    OPTIONAL = frozenset({"reshard", "cut", "param", "param_layout"})
    DEFAULTS = {"reshard": False}
    #: What `param_layout` may say.
    PARAM_LAYOUTS = ("compute", "update", "stored")

    def verify_op(self, mesh):
        self._check_same_tensor()
        attrs = self.operation.attributes
        if "cut" in attrs:
            for d in self.attr("cut"):
                if not self.result_type.has(d):
                    raise VerifyError(f"cut '{d}' is not a dimension of the result {self.result_type}")
        if "param_layout" in attrs and "param" not in attrs:
            raise VerifyError("attribute 'param_layout' needs 'param' (the parameter whose layout it is)")
        if "param_layout" not in attrs:
            return
        if "cut" in attrs:
            raise VerifyError("a parameter's boundary has either a layout to decide (param_layout) or its cut")
        if self.attr("param_layout") not in self.PARAM_LAYOUTS:
            raise VerifyError(f"param_layout must be one of {', '.join(self.PARAM_LAYOUTS)}, "
                              f"got '{self.attr('param_layout')}'")
        if self.result_type.without_layout() != self.result_type:
            raise VerifyError("a parameter's layout still to decide (param_layout) keeps its result free until "
                              "mtf-shard-update")

    def unlinked_dims(self) -> set[str]:
        """The dims a cut names; none for a plain constraint."""
        return set(self.attr("cut") or ())

    #: Not pure: propagation reads the constraint even where the result is unused, so an
    #: unused shard is not dead, and mtf-canonicalize never merges nor erases one.
    PURE = False


class _CollectiveOp(_GlobalIdentityOp):
    """A collective: a global identity whose layout change is `result_of`, the one statement
    of it that the verifier, the API, the reshard planner and propagation all use."""

    OPTIONAL = frozenset({"bytes_per_device"})
    IS_COLLECTIVE = True
    CHANGES_LAYOUT = True
    #: Attributes naming the dims whose layout this collective changes (in check order).
    CHANGED_DIM_ATTRS: tuple[str, ...] = ()
    #: Whether it completes pending reductions (its `reduction` and `axes` leave `partial`).
    COMPLETES_REDUCTION = False
    MEMORY = "materializes_operands"

    @property
    def axes(self) -> tuple[str, ...]:
        return self.attr("axes")

    @classmethod
    @functools.cache
    def kind(cls) -> str:
        """Its op name without the dialect ("all_reduce"): what the cost model, the reshard
        planner's steps and the compile report call it."""
        return cls.OPERATION_NAME.split(".", 1)[1]

    #: Its schedule on a ring of n devices, the one statement of its cost: how many times it
    #: goes round (n - 1 steps each; None: one step, whatever n), and whether each step sends
    #: a 1/n piece of the operand shard (True) or the whole shard (False).
    RING_PASSES: int | None = 1
    SENDS_PIECES = True

    @classmethod
    def ring_steps(cls, n: int) -> int:
        """Latency-bound steps over a group of `n` devices (a ring): the cost model's α term."""
        return 1 if cls.RING_PASSES is None else cls.RING_PASSES * (n - 1)

    @classmethod
    def ring_bytes(cls, shard: int, n: int) -> int:
        """Bytes one device sends over a group of `n` devices (a ring), its operand shard
        being `shard` bytes: every step's piece (the cost model's bytes, transforms/analysis/cost_model.py)."""
        return cls.ring_steps(n) * shard // (n if cls.SENDS_PIECES else 1)

    @classmethod
    def result_of(cls, source: TensorType, attrs: dict) -> TensorType:
        """The type this collective makes of `source`, given its attributes (Python values);
        VerifyError when it does not apply to `source`."""
        raise NotImplementedError(cls.OPERATION_NAME)

    @classmethod
    def operand_layouts(cls, attrs: dict, result_axes) -> dict[str, tuple[str, ...]] | None:
        """The inverse on the changed dims: their operand layouts, given `result_axes(dim)`
        (the result's layout of a dim); None when each side keeps the layout written for it."""
        return None

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        return cls.result_of(operand_types[0], attrs)

    def changed_dims(self) -> list[str]:
        return [self.attr(a) for a in self.CHANGED_DIM_ATTRS]

    def unlinked_dims(self) -> set[str]:
        return set(self.changed_dims())

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        if "axes" in self.ATTRIBUTES:
            self.axes_on_mesh(self.axes, mesh)
        for name in self.CHANGED_DIM_ATTRS:
            self.dim_attr(name, src)
        self._check_result(self.result_of(src, self.attribute_values()), result)

    def _check_result(self, expected: TensorType, result: TensorType) -> None:
        """The first difference between the result and the one `result_of` gives, in words."""
        if self.COMPLETES_REDUCTION and result.partial != expected.partial:
            left = expected.partial
            raise VerifyError(f"result must be partial over {format_axes(left) if left else 'no axes'}, got {result}")
        changed = self.changed_dims()
        for dim in changed:
            if _axes(result, dim) != _axes(expected, dim):
                raise VerifyError(f"result layout of '{dim}' must be @{format_axes(_axes(expected, dim))}, "
                                  f"got {_layout_text(result, dim)}")
        for d in result.names:
            if d not in changed and _axes(result, d) != _axes(expected, d):
                raise VerifyError(f"{self.short_name} may not change the layout of '{d}'")
        if result.partial != expected.partial:
            raise VerifyError(f"{self.short_name} may not change the pending partial axes")


def _dim(source: TensorType, attrs: dict, name: str) -> str:
    dim = attrs[name]
    if not source.has(dim):
        raise VerifyError(f"{name} '{dim}' is not a dimension of the operand {source}")
    return dim


def _completed(source: TensorType, attrs: dict) -> TensorType:
    """`source` with the pending reduction over `attrs['axes']` completed."""
    reduction, axes = attrs["reduction"], tuple(attrs["axes"])
    if reduction not in REDUCTIONS:
        raise VerifyError(f"reduction must be one of {', '.join(REDUCTIONS)}, got '{reduction}'")
    if source.partial_reduction != reduction and source.partial:
        raise VerifyError(f"reduction '{reduction}' does not match the operand's pending {source.partial_reduction}")
    missing = [a for a in axes if a not in source.partial]
    if missing:
        raise VerifyError(f"operand {source} is not partial over {format_axes(tuple(missing))}")
    return source.with_partial(tuple(a for a in source.partial if a not in axes))


def _minor_axes_removed(source: TensorType, dim: str, axes: tuple[str, ...], what: str) -> tuple[str, ...]:
    """`dim`'s layout without its minor-most `axes` (which it must end with)."""
    before, k = _axes(source, dim), len(axes)
    if k > len(before) or before[len(before) - k:] != axes:
        raise VerifyError(f"operand {_layout_text(source, dim)} does not end with the {what} axes {format_axes(axes)}")
    return before[: len(before) - k]


def _without(axes: tuple[str, ...], removed: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for a in axes if a not in removed)


@mtf_op
class AllReduceOp(_CollectiveOp):
    """`mtf.all_reduce {reduction, axes}`: complete a pending reduction over mesh axes."""

    OPERATION_NAME = "mtf.all_reduce"
    ATTRIBUTES = {"reduction": "str", "axes": "axes", **BYTES}
    COMPLETES_REDUCTION = True
    MEMORY = "in_place"

    RING_PASSES = 2  # a reduce_scatter, then an all_gather of the reduced pieces: 2(n-1)/n of the shard

    @classmethod
    def result_of(cls, source, attrs):
        return _completed(source, attrs)


@mtf_op
class AllGatherOp(_CollectiveOp):
    """`mtf.all_gather {dim, axes}`: un-split `dim` over its minor-most `axes`."""

    OPERATION_NAME = "mtf.all_gather"
    ATTRIBUTES = {"dim": "str", "axes": "axes", **BYTES}
    CHANGED_DIM_ATTRS = ("dim",)

    SENDS_PIECES = False  # its shard to each of the n-1 others

    @classmethod
    def result_of(cls, source, attrs):
        dim = _dim(source, attrs, "dim")
        return source.with_layout({dim: _minor_axes_removed(source, dim, tuple(attrs["axes"]), "gathered")})

    @classmethod
    def operand_layouts(cls, attrs, result_axes):
        axes = tuple(attrs["axes"])
        return {attrs["dim"]: _without(result_axes(attrs["dim"]), axes) + axes}


class _LocalCollectiveOp(_CollectiveOp):
    """A collective that moves no data: each device keeps part of what it holds."""

    RING_PASSES = 0


@mtf_op
class AllSliceOp(_LocalCollectiveOp):
    """`mtf.all_slice {dim, axes}`: split `dim` further over `axes` (each device keeps its slice)."""

    OPERATION_NAME = "mtf.all_slice"
    ATTRIBUTES = {"dim": "str", "axes": "axes", **BYTES}
    CHANGED_DIM_ATTRS = ("dim",)

    @classmethod
    def result_of(cls, source, attrs):
        dim, axes = _dim(source, attrs, "dim"), tuple(attrs["axes"])
        used = [a for a in axes if a in source.used_axes_list()]
        if used:
            raise VerifyError(f"mesh axis '{used[0]}' is already used by the operand {source}")
        return source.with_layout({dim: _axes(source, dim) + axes})

    @classmethod
    def operand_layouts(cls, attrs, result_axes):
        return {attrs["dim"]: _without(result_axes(attrs["dim"]), tuple(attrs["axes"]))}


@mtf_op
class AsPartialOp(_LocalCollectiveOp):
    """`mtf.as_partial {axes}`: the same value as a sum pending over `axes` too (no data moves).

    The first device of each group over `axes` keeps its value and the others hold zero, so
    the sum over `axes` is the value exactly (NaN and inf included). The operand must not vary
    along `axes` (no dim split over them, no sum pending over them). mtf-insert-collectives
    uses it to add sums pending over different axes without completing either: both become
    pending over the union, completed later by one all_reduce instead of two."""

    OPERATION_NAME = "mtf.as_partial"
    ATTRIBUTES = {"axes": "axes", **BYTES}
    MEMORY = "in_place"

    @classmethod
    def result_of(cls, source, attrs):
        axes = tuple(attrs["axes"])
        if source.partial and source.partial_reduction != "sum":
            raise VerifyError(f"operand {source} is pending a {source.partial_reduction}, not a sum")
        varying = [a for a in axes if a in source.used_axes_list()]
        if varying:
            raise VerifyError(f"operand {source} already varies along mesh axis '{varying[0]}'")
        return source.with_partial(source.partial + axes, "sum")


@mtf_op
class ReduceScatterOp(_CollectiveOp):
    """`mtf.reduce_scatter {reduction, dim, axes}`: complete a pending reduction over `axes`
    and split `dim` over them."""

    OPERATION_NAME = "mtf.reduce_scatter"
    ATTRIBUTES = {"reduction": "str", "dim": "str", "axes": "axes", **BYTES}
    CHANGED_DIM_ATTRS = ("dim",)
    COMPLETES_REDUCTION = True

    # (n-1)/n of the shard: each piece but its own, to the device that keeps it (the default ring)

    @classmethod
    def result_of(cls, source, attrs):
        dim = _dim(source, attrs, "dim")
        return _completed(source, attrs).with_layout({dim: _axes(source, dim) + tuple(attrs["axes"])})

    @classmethod
    def operand_layouts(cls, attrs, result_axes):
        return AllSliceOp.operand_layouts(attrs, result_axes)


@mtf_op
class AllToAllOp(_CollectiveOp):
    """`mtf.all_to_all {src_dim, dst_dim, axes}`: move the minor-most `axes` of `src_dim`'s
    split onto `dst_dim`."""

    OPERATION_NAME = "mtf.all_to_all"
    ATTRIBUTES = {"src_dim": "str", "dst_dim": "str", "axes": "axes", **BYTES}
    CHANGED_DIM_ATTRS = ("src_dim", "dst_dim")

    # (n-1)/n of the shard: each piece but its own, to the device that takes it (the default ring)

    @classmethod
    def result_of(cls, source, attrs):
        a, b, axes = _dim(source, attrs, "src_dim"), _dim(source, attrs, "dst_dim"), tuple(attrs["axes"])
        if a == b:
            raise VerifyError(f"src_dim and dst_dim must differ, both are '{a}'")
        return source.with_layout({a: _minor_axes_removed(source, a, axes, "moved"), b: _axes(source, b) + axes})

    @classmethod
    def operand_layouts(cls, attrs, result_axes):
        a, b, axes = attrs["src_dim"], attrs["dst_dim"], tuple(attrs["axes"])
        return {a: _without(result_axes(a), axes) + axes, b: _without(result_axes(b), axes)}


@mtf_op
class CollectivePermuteOp(_CollectiveOp):
    """`mtf.collective_permute`: re-map which device holds which shard; every device's shard
    keeps its local shape (e.g. `@x` -> `@y` with |x| = |y|, or `@(x,y)` -> `@(y,x)`). Its
    result layout is chosen, not derived: `result_of` takes it as `attrs['layout']`."""

    OPERATION_NAME = "mtf.collective_permute"
    ATTRIBUTES = BYTES

    RING_PASSES, SENDS_PIECES = None, False  # the whole shard, in one step, to the device that holds it next

    @classmethod
    def result_of(cls, source, attrs):
        return source.with_layout(attrs.get("layout", {}))

    def changed_dims(self) -> list[str]:
        """The dims laid out differently on the two sides (a dim free on either side is not moved)."""
        src, dst = self.input_type, self.result_type
        return [d.name for d in src.dims if d.axes is not None and dst.dim(d.name).axes not in (None, d.axes)]

    def verify_op(self, mesh):
        src, result = self._check_same_tensor()
        if src.partial != result.partial:
            raise VerifyError("collective_permute may not change the pending partial axes")
        if mesh is not None and src.local_shape(mesh.shape) != result.local_shape(mesh.shape):
            raise VerifyError(
                f"collective_permute keeps each device's shard shape: operand shard "
                f"{src.local_shape(mesh.shape)}, result shard {result.local_shape(mesh.shape)}"
            )


def is_collective(op) -> bool:
    """Whether `op` (an OpView or Operation) is one of the collectives."""
    return getattr(OP_CLASSES.get(op.operation.name), "IS_COLLECTIVE", False)


#: The op names of the collectives (`mtf.shard` is not one: it constrains, it moves nothing).
COLLECTIVE_OP_NAMES = frozenset(name for name, cls in OP_CLASSES.items() if getattr(cls, "IS_COLLECTIVE", False))
