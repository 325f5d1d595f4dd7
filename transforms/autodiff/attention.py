"""VJP of dot-product attention: one `mtf.dot_product_attention_grad`, which recomputes the
weights block by block from q, k, v, the forward's output and its cotangent (flash
attention's backward: nothing of [query_length, key_length] is saved from the forward)."""
from __future__ import annotations

from meshir.dialect.ops import DotProductAttentionGradOp, DotProductAttentionOp

from .emitter import free, type_of
from .rules import no_gradient, vjp


def _differentiable(op) -> tuple[int, ...]:
    """q, k, v and the bias; never the mask."""
    bias = op.extra_index("bias")
    return (0, 1, 2) + (() if bias is None else (bias,))


@vjp(DotProductAttentionOp, operands=_differentiable)
def _attention(em, op, ct, wanted):
    operands = list(op.operation.operands)
    primals = operands[:3] + ([operands[op.extra_index("bias")]] if op.attr("has_bias") else [])
    grad = DotProductAttentionGradOp([free(type_of(v)).to_mlir() for v in primals], operands + [op.result, ct],
                                     dict(op.operation.attributes), loc=em.loc, ip=em.ip)
    results = list(grad.operation.results)
    out = {0: results[0], 1: results[1], 2: results[2]}
    if op.attr("has_bias"):
        out[op.extra_index("bias")] = results[3]
    return {i: g for i, g in out.items() if i in wanted}


no_gradient(DotProductAttentionGradOp)
