"""einsum(one_hot(ids), updates) over exactly the ids' names, lowered as a scatter-add.

The gather VJP writes the table's cotangent in this form (transforms/autodiff/indexing.py).
Lowered literally, the one-hot `[depth, ids...]` is materialized: it depends on the ids
only, so XLA computes it early and keeps it alive to the end of the step, and the dot costs
depth x ids x rest multiply-adds (a 32k vocabulary x 16k tokens one-hot is gigabytes). A
`stablehlo.scatter` with an add region sums the updates into zeros at the ids instead, late
and in place, as jax's gradient of a lookup does.

Why a peephole in the lowering and not an `mtf.scatter_add` op: the einsum's result type,
layout and pending reduction stay exactly what they were, so propagation, collective
insertion and the partitioned verifier see nothing new; only the local computation changes.

Matched (`scatter_form`): a two-operand einsum, one operand a one_hot used by it alone, the
other (the updates) holding every id name with the ids' layout and not the depth, and a
result of the depth plus the updates' other names. Per device the ids become offsets into
the device's block of the depth dim (as `gather` does); an update whose index falls outside
the block (an id of another device's block, or out of range) is skipped by the scatter (XLA's
scatter semantics, which jax's `mode="drop"` scatter relies on too), so it adds nothing.

Non-finite updates: the literal einsum multiplies them by every other row's 0, which puts NaN
in every depth row of that column but their own. The lowering keeps that meaning exactly
(`with_literal_non_finite`), so the compiled program equals the reference interpreter and
gspmd mode on every input: an optimisation in the lowering must not change what the IR
means. (jax.grad of a lookup leaves the other rows alone; matching it would be a change of
the gather VJP's IR, e.g. an `mtf.scatter_add` op with that meaning, not of its lowering.)
On a mesh in gspmd mode the literal form stays (gspmd.py's "lower_global" rules): XLA
partitions the global program and chooses collectives.

Both are special forms of the "lower" slot (dialect/op_registry.py), declared with their
condition: an einsum in scatter form, a one_hot whose only user is one; the literal
contraction.einsum and indexing.one_hot stay the plain rules.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import EinsumOp, OneHotOp
from meshir.dialect.tensor_type import TensorType

from . import builder as hlo
from .builder import i64_dims
from .context import FunctionLowering
from .types import Local, compute_element

#: The value of a one_hot lowered into its einsum's scatter; any other reader fails to parse.
_FOLDED = "%one_hot_folded_into_scatter"


@dataclass(frozen=True)
class ScatterForm:
    """The matched einsum's parts: the one_hot's ids, the updates (operand index) and the depth."""

    ids: object  # the one_hot's ir.Value operand
    ids_type: TensorType
    updates_index: int
    depth: str


def scatter_form(op) -> ScatterForm | None:
    """The einsum `op` as a scatter-add, or None when it is not one (module docstring)."""
    operands = list(op.operation.operands)
    if len(operands) != 2:
        return None
    for hot_index in (0, 1):
        hot = operands[hot_index].owner
        if isinstance(hot, OneHotOp) and _used_once(operands[hot_index]):
            form = _match(op, hot, 1 - hot_index)
            if form is not None:
                return form
    return None


def _used_once(value) -> bool:
    return len(list(value.uses)) == 1


def _match(op, hot: OneHotOp, updates_index: int) -> ScatterForm | None:
    ids_type, hot_type = hot.input_type, hot.result_type
    updates_type, result = op.operand_types[updates_index], op.result_type
    depth = hot.depth_name
    ids = list(ids_type.names)
    kept = [n for n in updates_type.names if n not in ids]
    if hot_type.partial or ids_type.partial or updates_type.has(depth):
        return None
    if any(not updates_type.has(n) or updates_type.dim(n).axes != ids_type.dim(n).axes for n in ids):
        return None
    if sorted(result.names) != sorted(kept + [depth]) or hot_type.dim(depth).axes != result.dim(depth).axes:
        return None
    return ScatterForm(hot.input, ids_type, updates_index, depth)


def scatter_add(b: hlo.Builder, zeros: Local, ids: Local, updates: Local, axis: int) -> Local:
    """`zeros` plus each row of `updates` (dims: the ids' dims, then `zeros`' dims but `axis`)
    added at index `ids[...]` along `axis`; out-of-range ids are skipped."""
    r = ids.rank
    fields = {
        "update_window_dims": list(range(r, updates.rank)),
        "inserted_window_dims": [axis],
        "scatter_dims_to_operand_dims": [axis],
        "index_vector_dim": r,
    }
    numbers = ", ".join(f"{k} = {v if isinstance(v, int) else i64_dims(v)}" for k, v in fields.items() if v != [])
    attrs = {"indices_are_sorted": "false", "scatter_dimension_numbers": f"#stablehlo.scatter<{numbers}>",
             "unique_indices": "false"}
    region = hlo.reduction_region(b, "sum", zeros.elem)
    return b.op("scatter", [zeros, ids, updates], zeros.shape, zeros.elem, attrs, region)


def lower_as_scatter(p: FunctionLowering, op, form: ScatterForm) -> Local:
    """The einsum's local result: the updates scattered into the device's block of the depth."""
    b, result = p.b, op.result_type
    updates_type = op.operand_types[form.updates_index]
    updates = p.operands(op)[form.updates_index]
    ids = p.local(form.ids)
    axis = result.index(form.depth)
    if p.split_axes(result, axis):
        offset = hlo.convert(b, p.offsets(result)[axis], ids.elem)
        ids = hlo.binary(b, "subtract", ids, hlo.scalar_to(b, offset, ids.shape))
    rest = [n for n in result.names if n != form.depth]
    order = list(form.ids_type.names) + rest
    updates = hlo.transpose(b, updates, [updates_type.index(n) for n in order])
    elem = compute_element(updates.elem)
    updates = hlo.convert(b, updates, elem)
    zeros = hlo.constant(b, 0, elem, p.shape(result))
    summed = scatter_add(b, zeros, ids, updates, axis)
    return hlo.convert(b, with_literal_non_finite(b, summed, ids, updates, axis), result.element_type)


def with_literal_non_finite(b: hlo.Builder, summed: Local, ids: Local, updates: Local, axis: int) -> Local:
    """`summed` with NaN where the literal einsum has one: a row gets `0 * u` for every update
    `u` of another id, NaN when `u` is not finite. Per column, the lowest and highest id among
    its non-finite updates (two small reduces) tell whether one exists whose id is not the
    row's own; finite inputs leave `summed` as it is. No second scatter: the check costs no
    buffer of the result's size."""
    flags = b.op("not", [b.op("is_finite", [updates], updates.shape, "i1")], updates.shape, "i1")
    id_of_update = hlo.broadcast_in_dim(b, ids, updates.shape, range(ids.rank))
    id_dims = range(ids.rank)

    def bad_ids(kind: str) -> Local:
        none = hlo.splat_like(b, hlo.reduction_identity(kind, ids.elem), id_of_update)
        per_column = hlo.reduce(b, hlo.select(b, flags, id_of_update, none), id_dims, kind)
        return hlo.broadcast_in_dim(b, per_column, summed.shape, [d for d in range(summed.rank) if d != axis])

    lowest, highest = bad_ids("min"), bad_ids("max")
    row = hlo.iota(b, summed.shape, axis, ids.elem)
    any_bad = hlo.compare(b, "le", lowest, highest)
    only_own = hlo.binary(b, "and", hlo.compare(b, "eq", lowest, row), hlo.compare(b, "eq", highest, row))
    others_bad = hlo.binary(b, "and", any_bad, hlo.unary(b, "not", only_own))
    return hlo.select(b, others_bad, hlo.splat_like(b, float("nan"), summed), summed)


@rule("lower", EinsumOp, when=scatter_form)
def einsum_as_scatter(p: FunctionLowering, op) -> Local:
    return lower_as_scatter(p, op, scatter_form(op))


def _folded_into_scatter(op) -> bool:
    """True when the one_hot's only user is an einsum that lowers as a scatter."""
    uses = list(op.result.uses)
    return len(uses) == 1 and isinstance(uses[0].owner, EinsumOp) and scatter_form(uses[0].owner) is not None


@rule("lower", OneHotOp, when=_folded_into_scatter)
def folded_one_hot(p: FunctionLowering, op) -> Local:
    """Nothing: the scatter reads the ids itself."""
    return Local(_FOLDED, p.shape(op.result_type), op.result_type.element_type)
