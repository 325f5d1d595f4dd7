"""VJPs of the indexing ops and the ops that create values.

gather(table, ids) along `dim`: the table's cotangent is a scatter-add of the result's
cotangent into the rows the ids picked, written as an einsum with one_hot(ids) over `dim`:
ct_table[dim=k, rest] = sum over id positions p with ids[p] = k of ct[p, rest]. Out-of-range
ids make zero one_hot rows, so they get no gradient, as they gave zeros forward. Ids get none.
The one_hot is used by that einsum alone, so the per-device lowering turns the pair into a
`stablehlo.scatter` (lowering/stablehlo/scatter_add.py): no one-hot is materialized. The
lowering keeps the einsum's meaning exactly, so a NaN/inf in the cotangent spreads NaN over
the other rows of its column (0 * inf), as the reference interpreter computes; jax.grad puts
it in its id's row only (equal for finite values).

one_hot, constant, iota and the random ops have no differentiable input.
"""
from __future__ import annotations

from meshir.dialect.ops import ConstantOp, GatherOp, IotaOp, OneHotOp, RandomNormalOp, RandomUniformOp
from meshir.dialect.tensor_type import Dimension

from .emitter import type_of
from .rules import no_gradient, vjp

no_gradient(OneHotOp, ConstantOp, IotaOp, RandomUniformOp, RandomNormalOp)


@vjp(GatherOp, operands=lambda op: (0,))
def _gather(em, op, ct, wanted):
    table, ids = op.operation.operands
    t = type_of(table)
    dim = op.attr("dim")
    hot = em.one_hot(ids, Dimension(dim, t.size(dim)), t.element_type)
    available = set(type_of(hot).names) | set(type_of(ct).names)
    return {0: em.einsum([hot, ct], [n for n in t.names if n in available])}
