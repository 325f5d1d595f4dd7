"""Rules of the ops that create tensors: constant, iota and the counter-based random ops."""
from __future__ import annotations

import numpy as np

from .. import random_bits
from .arrays import broadcast_to_type


def constant(op, args):
    """The `value` attribute filled or reshaped to the result (ConstantOp.values)."""
    return op.values()


def iota(op, args):
    """Each element is its index along `dim`."""
    t = op.result_type
    dim = op.attr("dim")
    return broadcast_to_type(np.arange(t.size(dim)).astype(t.dtype), [dim], t)


def random_uniform(op, args):
    """Uniform in [minval, maxval) from (seed, global index): the same for every layout."""
    t = op.result_type
    return random_bits.uniform(op.attr("seed"), t.shape, op.attr("minval"), op.attr("maxval"), t.element_type)


def random_normal(op, args):
    """Normal(mean, stddev) from (seed, global index): the same for every layout."""
    t = op.result_type
    return random_bits.normal(op.attr("seed"), t.shape, op.attr("mean"), op.attr("stddev"), t.element_type)


RULES = {
    "mtf.constant": constant,
    "mtf.iota": iota,
    "mtf.random_uniform": random_uniform,
    "mtf.random_normal": random_normal,
}
