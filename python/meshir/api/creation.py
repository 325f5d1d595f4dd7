"""Ops that create tensors: constant, iota, random_uniform, random_normal."""
from __future__ import annotations

import numbers

import numpy as np

from meshir.dialect import TensorType
from meshir.dialect.ops import ConstantOp, IotaOp, RandomNormalOp, RandomUniformOp
from meshir.dialect.tensor_type import ELEMENT_TYPES

from .builder import build, located_error
from .dims import as_dims


def _type(dims, dtype: str, what: str) -> TensorType:
    if dtype not in ELEMENT_TYPES:
        raise located_error(f"'{what}': unknown element type '{dtype}' (expected one of {', '.join(ELEMENT_TYPES)})")
    return TensorType.make([(d.name, d.size) for d in as_dims(dims, what=what)], dtype)


def constant(value, dims=(), dtype: str = "f32", program=None):
    """A constant: a number broadcast over `dims`, or an array whose shape matches `dims`."""
    t = _type(dims, dtype, "mtf.constant")
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        if t.is_integer and float(value) != int(value):
            raise located_error(f"'mtf.constant': {value!r} is not an integer but the element type is {dtype}")
        if dtype == "i1":
            attr = bool(value)
        else:
            attr = int(value) if t.is_integer else float(value)
        return build(ConstantOp, t, [], {"value": attr}, program)
    array = np.asarray(value)
    if array.shape != t.shape:
        raise located_error(f"'mtf.constant': value has shape {array.shape} but dims {list(t.names)} have shape {t.shape}")
    storage = {"i1": np.bool_, "i32": np.int32, "i64": np.int64, "f64": np.float64}.get(dtype, np.float32)
    return build(ConstantOp, t, [], {"value": array.astype(storage)}, program)


def iota(dims, dim: str, dtype: str = "i32", program=None):
    """Each element's index along `dim`, over a tensor with `dims`."""
    return build(IotaOp, _type(dims, dtype, "mtf.iota"), [], {"dim": getattr(dim, "name", dim)}, program)


def random_uniform(dims, seed: int, minval: float = 0.0, maxval: float = 1.0, dtype: str = "f32", program=None):
    """Uniform samples in [minval, maxval): a function of (seed, global index), so every
    layout gives the same numbers."""
    return build(RandomUniformOp, _type(dims, dtype, "mtf.random_uniform"), [],
                 {"seed": int(seed), "minval": float(minval), "maxval": float(maxval)}, program)


def random_normal(dims, seed: int, mean: float = 0.0, stddev: float = 1.0, dtype: str = "f32", program=None):
    """Normal samples: a function of (seed, global index), the same under every layout."""
    return build(RandomNormalOp, _type(dims, dtype, "mtf.random_normal"), [],
                 {"seed": int(seed), "mean": float(mean), "stddev": float(stddev)}, program)
