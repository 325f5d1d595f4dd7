"""meshir.layers: the layers of Transformer language models as functions on named tensors.

Each layer is a function `layer(x, params, ...)` of a named Tensor and a mapping of its
parameters by name (documented with the layer, and given as dims by its `*_params`
function), building ops in the current mi.Program or mi.jit trace. Layouts are not written
here: the layout rules given at compile time split the documented dims (except inside the
mixture of experts, which names what one rule set cannot say; see meshir.layers.moe).

    embeddings   embed, tied_logits, embedding_params
    norms        layer_norm, rms_norm, norm_params
    attention    attention (causal or not; multi-head, grouped- or multi-query), attention_params
    feedforward  ffn (GELU, ReLU; SwiGLU/GeGLU when gated), ffn_params
    stack        stacked (identical layers as one mi.scan), stacked_params, stack_params
    moe          moe (GShard/Switch top-k gating with capacity), moe_params, expert_capacity
    decoding     cached_attention (a key/value cache written in place), choose (greedy, sampled,
                 top-k), beam_step, reorder, length_penalty, cache_dims
    pipeline     pipeline (GPipe's stages and microbatches, SPMD), pipeline_params, stage_params, last_stage
"""
from .attention import MASK_VALUE, attention, attention_params
from .decoding import beam_step, cache_dims, cached_attention, choose, length_penalty, reorder
from .embeddings import embed, embedding_params, tied_logits
from .feedforward import ACTIVATIONS, ffn, ffn_params
from .moe import SECOND_POLICIES, MoEOutput, expert_capacity, moe, moe_params, unsplit
from .norms import layer_norm, norm_params, rms_norm
from .pipeline import last_stage, pipeline, pipeline_params, stage_params
from .stack import stack_params, stacked, stacked_params

__all__ = [
    "ACTIVATIONS", "MASK_VALUE", "MoEOutput", "SECOND_POLICIES", "attention", "attention_params", "beam_step",
    "cache_dims", "cached_attention", "choose", "embed", "length_penalty", "reorder",
    "embedding_params", "expert_capacity", "ffn", "ffn_params", "last_stage", "layer_norm", "moe", "moe_params",
    "norm_params", "pipeline", "pipeline_params", "rms_norm", "stage_params", "stack_params", "stacked", "stacked_params", "tied_logits", "unsplit",
]
