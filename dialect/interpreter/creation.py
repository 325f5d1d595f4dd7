"""Rules of the ops that create tensors: constant, iota and the counter-based random ops."""
from __future__ import annotations

import numpy as np

from .. import random_bits
from ..op_registry import rule
from ..ops.creation import ConstantOp, IotaOp, RandomNormalOp, RandomUniformOp
from .arrays import broadcast_to_type


@rule("interpret", ConstantOp)
def constant(op, args):
    """The `value` attribute filled or reshaped to the result (ConstantOp.values)."""
    return op.values()


@rule("interpret", IotaOp)
def iota(op, args):
    """Each element is its index along `dim`."""
    t = op.result_type
    dim = op.attr("dim")
    return broadcast_to_type(np.arange(t.size(dim)).astype(t.dtype), [dim], t)


@rule("interpret", RandomUniformOp)
def random_uniform(op, args):
    """Uniform in [minval, maxval) from (seed, global index): the same for every layout."""
    t = op.result_type
    return random_bits.uniform(_seed(op, args), t.shape, op.attr("minval"), op.attr("maxval"), t.element_type)


@rule("interpret", RandomNormalOp)
def random_normal(op, args):
    """Normal(mean, stddev) from (seed, global index): the same for every layout."""
    t = op.result_type
    return random_bits.normal(_seed(op, args), t.shape, op.attr("mean"), op.attr("stddev"), t.element_type)


def _seed(op, args) -> int:
    """The seed operand's value, or the `seed` attribute."""
    return int(np.asarray(args[0])) if args else op.attr("seed")
