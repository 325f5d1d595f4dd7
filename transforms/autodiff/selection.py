"""VJPs of the selection ops.

top_k: the cotangent of each selected value goes back to the position it came from, an
einsum of the values' cotangent with one_hot(indices) over `dim`, summed over the k dim (as
jax's top_k transpose scatters it; the per-device lowering turns the pair into a scatter).
Indices, argmax and argmin carry no gradient.
"""
from __future__ import annotations

from meshir.dialect.ops import ArgMaxOp, ArgMinOp, TopKOp
from meshir.dialect.tensor_type import Dimension

from .emitter import type_of
from .rules import no_gradient, vjp

no_gradient(ArgMaxOp, ArgMinOp)


@vjp(TopKOp)
def _top_k(em, op, ct, wanted):
    x = op.operation.operands[0]
    t, dim = type_of(x), op.attr("dim")
    _, indices = op.operation.results
    hot = em.one_hot(indices, Dimension(dim, t.size(dim)), t.element_type)
    return {0: em.einsum([hot, ct[0]], list(t.names))}
