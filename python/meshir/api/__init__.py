"""The user-facing builder API: Dim, Program, Tensor and one function per `mtf` op."""
from .collectives import (  # noqa: F401
    all_gather,
    all_reduce,
    all_slice,
    all_to_all,
    collective_permute,
    reduce_scatter,
    shard,
)
from .compile import compile  # noqa: F401
from .composites import cross_entropy, dropout, gelu, layer_norm, log_softmax, mean, softmax  # noqa: F401
from .contraction import einsum, reduce_max, reduce_min, reduce_sum  # noqa: F401
from .creation import constant, iota, random_normal, random_uniform  # noqa: F401
from .dims import Dim  # noqa: F401
from .grad import GradientProgram, grad, value_and_grad  # noqa: F401
from . import elementwise as _elementwise
from .elementwise import *  # noqa: F401,F403  (its __all__: one function per elementwise op)
from .indexing import gather, one_hot  # noqa: F401
from .optim import SGD, Adafactor, Adam, AdamW  # noqa: F401
from .program import Program, current_program  # noqa: F401
from .propagation import layout_table, propagate  # noqa: F401
from .shape_ops import broadcast, concat, pad, rename, reshape, shift, slice, transpose  # noqa: F401
from .tensor import Tensor  # noqa: F401
from .train import TrainStep, init_optimizer_state, train_step  # noqa: F401
from .visualize import visualize  # noqa: F401

__all__ = [
    "TrainStep",
    "init_optimizer_state",
    "train_step",
    "Adafactor",
    "Adam",
    "AdamW",
    "SGD",
    "Dim",
    "Program",
    "Tensor",
    "all_gather",
    "all_reduce",
    "all_slice",
    "all_to_all",
    "broadcast",
    "collective_permute",
    "compile",
    "concat",
    "constant",
    "cross_entropy",
    "current_program",
    "dropout",
    "einsum",
    "gather",
    "gelu",
    "grad",
    "iota",
    "layout_table",
    "layer_norm",
    "log_softmax",
    "mean",
    "one_hot",
    "pad",
    "propagate",
    "random_normal",
    "random_uniform",
    "reduce_max",
    "reduce_min",
    "reduce_scatter",
    "reduce_sum",
    "rename",
    "reshape",
    "shard",
    "shift",
    "slice",
    "softmax",
    "transpose",
    "value_and_grad",
    "visualize",
    *_elementwise.__all__,
]
