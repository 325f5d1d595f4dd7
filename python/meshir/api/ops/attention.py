"""Dot-product attention on named dims, as one op (dialect/ops/attention.py)."""
from __future__ import annotations

import math

from meshir.dialect import MeshIRValueError
from meshir.dialect.op_registry import INTERNAL, register
from meshir.dialect.ops.attention import (
    DEFAULT_BLOCK_SIZE, IMPLEMENTATIONS, DotProductAttentionGradOp, DotProductAttentionOp,
)

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds
from meshir.api.programs._locations import located_error
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["dot_product_attention"]

#: Implementations of other backends, named now so that asking for one says what is missing.
_LATER = {"flash": "the Pallas flash-attention kernel of TPUs", "cudnn": "cuDNN's fused attention of GPUs"}


@builds(DotProductAttentionOp)
def dot_product_attention(q: Tensor, k: Tensor, v: Tensor, *, query_length="length", key_length="memory_length",
                          key_dim="d_k", causal: bool = False, mask: Tensor | None = None,
                          bias: Tensor | None = None, scale: float | None = None, implementation: str | None = None,
                          block_size: int | None = None) -> Tensor:
    """softmax(q·k · scale + bias) · v over `key_length`, by name: q [..., query_length,
    key_dim], k [..., key_length, key_dim], v [..., key_length, value_dim] (its one dim that
    is neither key_length nor one of q's; key_dim when it has none); the result is q's dims
    with key_dim replaced by the value dim. `scale`: 1/sqrt(key_dim's size) by default.
    `causal`: query i sees key j when j <= i + (key length - query length). `mask`: a boolean
    tensor on some of the weights' dims (q's others, query_length, key_length), True where a
    key is seen; a hidden logit is replaced by -1e9. `bias`: a float tensor on such dims, added
    to the logits. `implementation`: "blockwise" (the default on every backend: a scan over
    blocks of `block_size` keys with a running max and sum, never holding the weights) or
    "xla" (einsum, softmax, einsum). The gradient recomputes the weights block by block."""
    what = "mi.dot_product_attention"
    for t, role in ((q, "the query"), (k, "the key"), (v, "the value")):
        checks.tensor(t, f"{role} of {what}")
    length = checks.dim_name(query_length, q, f"{what}: query_length")
    key_d = checks.dim_name(key_dim, q, f"{what}: key_dim")
    keys = checks.dim_name(key_length, k, f"{what}: key_length")
    checks.dim_name(keys, v, f"{what}: key_length of the value")
    checks.dim_name(key_d, k, f"{what}: key_dim of the key")
    own = [n for n in v.names if n != keys and (n not in q.names or n == key_d)]
    if len(own) != 1:
        raise located_error(f"{what}: the value {v.type} must have one dim besides key_length '{keys}' and the "
                            f"query's other dims, its value dim; it has {own or 'none'}", MeshIRValueError)
    if implementation is not None and implementation in _LATER:
        raise located_error(f"{what}: implementation '{implementation}' ({_LATER[implementation]}) is not available "
                            f"here; available: {', '.join(IMPLEMENTATIONS)}", MeshIRValueError)
    impl = "blockwise" if implementation is None else checks.choice(implementation, IMPLEMENTATIONS,
                                                                      f"implementation of {what}")
    size = q.type.size(key_d)
    attrs = {"query_length": length, "key_length": keys, "key_dim": key_d, "value_dim": own[0],
             "causal": checks.flag(causal, f"causal of {what}"),
             "scale": 1.0 / math.sqrt(size) if scale is None else checks.real(scale, f"scale of {what}"),
             "implementation": impl,
             "block_size": DEFAULT_BLOCK_SIZE if block_size is None else checks.integer(block_size, f"block_size of {what}", 1),
             "has_mask": mask is not None, "has_bias": bias is not None}
    extras = [checks.tensor(t, f"the {role} of {what}") for t, role in ((mask, "mask"), (bias, "bias")) if t is not None]
    return build(DotProductAttentionOp, None, [q, k, v, *extras], attrs)


register("build", DotProductAttentionGradOp, INTERNAL)
