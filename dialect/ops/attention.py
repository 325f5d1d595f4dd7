"""Dot-product attention as one op, and its gradient: softmax over the keys of q·k, times v.

`mtf.dot_product_attention` takes q [..., query_length, key_dim], k [..., key_length, key_dim],
v [..., key_length, value_dim] (the other dims, batch and heads, shared by name; k and v may
lack some, shared by several queries' heads: grouped-query attention) and an
optional boolean `mask` and float `bias` on a subset of the weights' dims [..., query_length,
key_length]; its result is q's dims with key_dim replaced by value_dim. A hidden logit (mask
False, or a key after the query when `causal`, the last query lined up with the last key) is
replaced by MASK_VALUE, so a fully hidden row averages v, as jax.nn.dot_product_attention does.

Both ops compute along key_length and key_dim, which must be whole on every device (a split
key length is all-gathered); batch, heads, the query length and the value dim may stay split.
`implementation` picks the lowering (lowering/stablehlo/attention.py): "blockwise" scans key
blocks with a running max and sum and never holds a [query_length, key_length] array;
"xla" is einsum, softmax, einsum. `mtf.dot_product_attention_grad` is the VJP: it recomputes
the weights block by block from q, k, v, the forward's output and the output's cotangent
(flash attention's backward), and returns the cotangents of q, k, v and the bias.
"""
from __future__ import annotations

import math

from ..diagnostics import VerifyError
from ..tensor_type import TensorType
from .base import MtfOp, mtf_op, names_text, same_sizes

#: The logit a hidden (masked or causally later) key gets: exp underflows to 0, and a row with
#: every key hidden stays finite (it averages v).
MASK_VALUE = -1e9
#: The lowerings of an attention op; "flash" and "cudnn" (accelerator kernels) are not built yet.
IMPLEMENTATIONS = ("blockwise", "xla")
DEFAULT_BLOCK_SIZE = 128
FLOATS = ("f32", "bf16", "f16", "f64")


class _AttentionOp(MtfOp):
    ATTRIBUTES = {"query_length": "str", "key_length": "str", "key_dim": "str", "value_dim": "str",
                  "causal": "bool", "scale": "float", "implementation": "str", "block_size": "int",
                  "has_mask": "bool", "has_bias": "bool"}
    OPTIONAL = frozenset({"causal", "implementation", "block_size", "has_mask", "has_bias"})
    DEFAULTS = {"causal": False, "implementation": "blockwise", "block_size": DEFAULT_BLOCK_SIZE,
                "has_mask": False, "has_bias": False}
    OPERANDS = (3, 7)
    WHOLE_DIM_ATTRS = ("key_length", "key_dim")
    MEMORY = "materializes_operands"
    WORK = "index_space"
    PRECISION = "compute"

    # -- operands by role -------------------------------------------------------------------
    def extra_index(self, role: str) -> int | None:
        """The operand index of the mask or bias, None when the op has none."""
        index = 3
        for name in ("mask", "bias"):
            if self.attr(f"has_{name}"):
                if name == role:
                    return index
                index += 1
        return None

    def key_blocks(self) -> tuple[int, int]:
        """(keys per block, blocks) of the lowering: `block_size` keys per block, the last one
        padded, blockwise; every key in one block for "xla"."""
        keys = self.operand_types[1].size(self.attr("key_length"))
        block = min(self.attr("block_size"), keys) if self.attr("implementation") == "blockwise" else keys
        return block, -(-keys // block)

    def weight_names(self, q: TensorType) -> list[str]:
        """The dims of the weights: q's batch dims, the query length and the key length."""
        key_dim, length = self.attr("key_dim"), self.attr("query_length")
        return [n for n in q.names if n not in (key_dim, length)] + [length, self.attr("key_length")]

    def verify_attention(self, q: TensorType, k: TensorType, v: TensorType, extras: list[TensorType]) -> None:
        length, keys, key_dim, value_dim = (self.attr(a) for a in ("query_length", "key_length", "key_dim",
                                                                   "value_dim"))
        if length == keys:
            raise VerifyError(f"query_length and key_length must be two dims, got '{length}' for both")
        self.dim_attr("query_length", q, "query")
        self.dim_attr("key_dim", q, "query")
        self.dim_attr("key_length", k, "key")
        self.dim_attr("key_dim", k, "key")
        self.dim_attr("key_length", v, "value")
        self.dim_attr("value_dim", v, "value")
        batch = [n for n in q.names if n not in (length, key_dim)]
        for t, what, own in ((k, "key", {keys, key_dim}), (v, "value", {keys, value_dim})):
            if not own <= set(t.names) <= set(batch) | own:
                raise VerifyError(f"the {what} {t} must have {names_text(sorted(own))} and no dims but the query's "
                                  f"other dims {names_text(batch)}")
        same_sizes([q, k, v], "query, key and value")
        elem = q.element_type
        if elem not in FLOATS or k.element_type != elem or v.element_type != elem:
            raise VerifyError(f"query, key and value must be floats of one type, got {q.element_type}, "
                              f"{k.element_type}, {v.element_type}")
        weights = set(self.weight_names(q))
        for t, role in zip(extras, [r for r in ("mask", "bias") if self.attr(f"has_{r}")]):
            extra = [n for n in t.names if n not in weights]
            if extra:
                raise VerifyError(f"the {role} {t} has dims {names_text(extra)} the weights lack (weights: "
                                  f"{names_text(self.weight_names(q))})")
            same_sizes([q, k, t], f"query, key and {role}")
            want = ("i1",) if role == "mask" else FLOATS
            if t.element_type not in want:
                raise VerifyError(f"the {role} must be {'boolean (i1)' if role == 'mask' else 'a float'}, got "
                                  f"{t.element_type}")
        scale = self.attr("scale")
        if not math.isfinite(scale) or scale == 0:
            raise VerifyError(f"scale must be a finite non-zero number, got {scale}")
        if self.attr("implementation") not in IMPLEMENTATIONS:
            raise VerifyError(f"implementation must be one of {', '.join(IMPLEMENTATIONS)}, got "
                              f"'{self.attr('implementation')}'")
        if self.attr("block_size") < 1:
            raise VerifyError(f"block_size must be at least 1, got {self.attr('block_size')}")

    def _extras(self) -> list[TensorType]:
        return [self.operand_types[i] for i in (self.extra_index("mask"), self.extra_index("bias")) if i is not None]


@mtf_op
class DotProductAttentionOp(_AttentionOp):
    """`mtf.dot_product_attention {query_length, key_length, key_dim, value_dim, causal, scale,
    implementation, block_size, has_mask, has_bias}`: softmax(q·k · scale + bias, masked) · v."""

    OPERATION_NAME = "mtf.dot_product_attention"
    OPERANDS = (3, 5)

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        q, v = operand_types[0], operand_types[2]
        key_dim, value_dim = attrs["key_dim"], attrs["value_dim"]
        if not q.has(key_dim) or not v.has(value_dim):
            raise VerifyError(f"key_dim '{key_dim}' must be a dim of the query {q} and value_dim '{value_dim}' "
                              f"one of the value {v}")
        dims = [v.dim(value_dim) if d.name == key_dim else d for d in q.without_layout().dims]
        return q.without_layout().with_dims(dims)

    def verify_op(self, mesh):
        q, k, v = self.operand_types[:3]
        count = 3 + self.attr("has_mask") + self.attr("has_bias")
        if len(self.operation.operands) != count:
            raise VerifyError(f"expected {count} operands (q, k, v{', mask' * self.attr('has_mask')}"
                              f"{', bias' * self.attr('has_bias')}), got {len(self.operation.operands)}")
        self.verify_attention(q, k, v, self._extras())
        want = self.infer_result_type([q, k, v], self.attribute_values())
        if not want.same_shape(self.result_type) or self.result_type.element_type != q.element_type:
            raise VerifyError(f"result {self.result_type} must have the dims {names_text(want.names)} and the "
                              f"element type {q.element_type}")


@mtf_op
class DotProductAttentionGradOp(_AttentionOp):
    """`mtf.dot_product_attention_grad`: operands q, k, v, [mask], [bias], the forward's output
    and its cotangent; results the cotangents of q, k, v and [bias], each of its primal's type."""

    OPERATION_NAME = "mtf.dot_product_attention_grad"
    OPERANDS = (5, 7)
    RESULTS = None
    #: Each cotangent sums over the operand dims it lacks: the query length for dk and dv, the
    #: value dim for dq and dk, the weights' dims a bias lacks; split, they leave it pending.
    REDUCTION = "sum"

    def verify_op(self, mesh):
        q, k, v = self.operand_types[:3]
        count = 5 + self.attr("has_mask") + self.attr("has_bias")
        if len(self.operation.operands) != count:
            raise VerifyError(f"expected {count} operands, got {len(self.operation.operands)}")
        self.verify_attention(q, k, v, self._extras())
        out, ct = self.operand_types[-2:]
        if not out.same_shape(ct):
            raise VerifyError(f"the output {out} and its cotangent {ct} must have one shape")
        primals = [q, k, v] + ([self.operand_types[self.extra_index("bias")]] if self.attr("has_bias") else [])
        results = self.result_types
        if len(results) != len(primals) or not all(r.same_shape(p) and r.element_type == p.element_type
                                                   for r, p in zip(results, primals)):
            raise VerifyError("the results must be the cotangents of q, k, v and the bias, each of its primal's "
                              f"dims and element type, got {', '.join(map(str, results))}")
