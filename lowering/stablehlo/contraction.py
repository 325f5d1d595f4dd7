"""einsum and the reductions on local shards.

A contraction over a split name leaves a partial sum (the result type says `partial@...`);
locally there is nothing special to do. einsum: names found in one operand only and absent
from the result are summed first, then operands are contracted pairwise, left to right, with
`dot_general` (shared names still needed later are batch dims, the others contracting).
Floats accumulate in at least f32, as in the reference interpreter: bf16 operands go to
`dot_general` as they are, with an f32 result (what JAX's preferred_element_type emits).
"""
from __future__ import annotations

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import OP_CLASSES, EinsumOp
from meshir.dialect.ops.contraction import ReduceOp

from . import builder as hlo
from . import total_order
from .builder import i64_dims
from .context import FunctionLowering
from .types import Local, compute_element


def dot_general(b: hlo.Builder, x: Local, y: Local, batch, contract) -> Local:
    """`x . y` with `batch` and `contract` as lists of (x dim, y dim) pairs; the result's
    dims are batch, x's free dims, y's free dims (StableHLO's order)."""
    xb, yb = [i for i, _ in batch], [j for _, j in batch]
    xc, yc = [i for i, _ in contract], [j for _, j in contract]
    free_x = [s for i, s in enumerate(x.shape) if i not in xb + xc]
    free_y = [s for j, s in enumerate(y.shape) if j not in yb + yc]
    shape = [x.shape[i] for i in xb] + free_x + free_y
    fields = {
        "lhs_batching_dimensions": xb, "rhs_batching_dimensions": yb,
        "lhs_contracting_dimensions": xc, "rhs_contracting_dimensions": yc,
    }
    numbers = ", ".join(f"{k} = {i64_dims(v)}" for k, v in fields.items() if v)
    if x.elem != y.elem:  # a narrow operand meets an f32 partial product: both in f32
        x, y = hlo.convert(b, x, compute_element(x.elem)), hlo.convert(b, y, compute_element(y.elem))
    # Narrow operands stay narrow (bf16 matrix units) and the product accumulates in f32.
    return b.op("dot_general", [x, y], shape, compute_element(x.elem), {"dot_dimension_numbers": f"#stablehlo.dot<{numbers}>"})


def _sum_out(b: hlo.Builder, v: Local, names: list[str], drop) -> tuple[Local, list[str]]:
    axes = [i for i, n in enumerate(names) if n in drop]
    if not axes:
        return v, names
    return hlo.reduce(b, hlo.convert(b, v, compute_element(v.elem)), axes, "sum"), [n for n in names if n not in drop]


def _pair_dims(xn: list[str], yn: list[str], needed, batch_order=None):
    """(batch, contract, result names) of `x . y`: shared names still `needed` are batch dims
    (in `batch_order` when given, else x's order), the other shared names contracting."""
    shared = [n for n in xn if n in yn]
    batch = [n for n in (batch_order or xn) if n in shared and n in needed]
    contract = [n for n in shared if n not in needed]
    return batch, contract, batch + [n for n in xn if n not in shared] + [n for n in yn if n not in shared]


def _contract_pair(b, x: Local, xn: list[str], y: Local, yn: list[str], needed, batch_order=None):
    batch, contract, names = _pair_dims(xn, yn, needed, batch_order)
    out = dot_general(
        b, x, y,
        [(xn.index(n), yn.index(n)) for n in batch],
        [(xn.index(n), yn.index(n)) for n in contract],
    )
    return out, names


def _contract_last(b, x: Local, xn: list[str], y: Local, yn: list[str], result_names: list[str]):
    """The final pair, with its dims in `result_names`' order when some orientation gives it
    (no transpose after the dot; see the module docstring); else as `_contract_pair`."""
    keep = set(result_names)
    for (u, un), (w, wn) in (((x, xn), (y, yn)), ((y, yn), (x, xn))):
        if _pair_dims(un, wn, keep, result_names)[2] == result_names:
            return _contract_pair(b, u, un, w, wn, keep, result_names)
    return _contract_pair(b, x, xn, y, yn, keep)


@rule("lower", EinsumOp)
def einsum(p: FunctionLowering, op) -> Local:
    """The literal contraction (scatter_add.py declares a special form of it)."""
    b, result = p.b, op.result_type
    keep = set(result.names)
    terms = [(v if b.narrow_dots else hlo.convert(b, v, compute_element(v.elem)), list(t.names))
             for v, t in zip(p.operands(op), op.operand_types)]
    for i, (v, names) in enumerate(terms):
        elsewhere = keep.union(*(set(n) for j, (_, n) in enumerate(terms) if j != i))
        terms[i] = _sum_out(b, v, names, {n for n in names if n not in elsewhere})
    while len(terms) > 2:
        (x, xn), (y, yn), rest = terms[0], terms[1], terms[2:]
        needed = keep.union(*(set(n) for _, n in rest))
        terms = [_contract_pair(b, x, xn, y, yn, needed)] + rest
    if len(terms) == 2:
        (x, xn), (y, yn) = terms
        terms = [_contract_last(b, x, xn, y, yn, list(result.names))]
    v, names = terms[0]
    v = hlo.convert(b, v, compute_element(v.elem))  # one operand, nothing contracted
    v = hlo.transpose(b, v, [names.index(n) for n in result.names])
    return hlo.convert(b, v, result.element_type)


def reduce_rule(partitioned_by_xla: bool = False):
    """The rule of the reductions (the op's REDUCTION kind). `partitioned_by_xla` (gspmd
    mode): a max/min over a split dim reduces total-order keys, so the all-reduce XLA inserts
    keeps NaN (total_order.py)."""

    def rule(p: FunctionLowering, op) -> Local:
        b, src, result, kind = p.b, op.input_type, op.result_type, op.REDUCTION
        (x,) = p.operands(op)
        if kind == "sum":
            x = hlo.convert(b, x, compute_element(x.elem))
        reduced = set(op.reduced_names)
        axes = [i for i, n in enumerate(src.names) if n in reduced]
        across_devices = partitioned_by_xla and any(src.dims[i].axes for i in axes)
        if across_devices:
            v = total_order.through_keys(b, x, kind, lambda keys: hlo.reduce(b, keys, axes, kind))
        else:
            v = hlo.reduce(b, x, axes, kind)
        kept = [n for n in src.names if n not in reduced]
        v = hlo.transpose(b, v, [kept.index(n) for n in result.names])
        return hlo.convert(b, v, result.element_type)

    return rule


#: The reduction classes (ReduceOp's subclasses), each lowered by its REDUCTION kind.
REDUCTIONS = tuple(cls for cls in OP_CLASSES.values() if issubclass(cls, ReduceOp))
rule("lower", *REDUCTIONS)(reduce_rule())
