"""Ops that create tensors: constant, iota, random_uniform, random_normal."""
from __future__ import annotations

import numbers

import numpy as np

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.ops import ConstantOp, IotaOp, RandomNormalOp, RandomUniformOp

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds, located_error, result_type, runtime_arguments
from meshir.api.programs.dims import as_dims
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["constant", "iota", "random_normal", "random_uniform"]

#: Element type -> the NumPy type a constant's values are stored as.
_STORAGE = {"i1": np.bool_, "i32": np.int32, "i64": np.int64, "f64": np.float64}


def _type(dims, dtype, what: str):
    dtype = checks.element_type(dtype, f"'{what}'")
    return result_type(what, [(d.name, d.size) for d in as_dims(dims, what=what)], dtype)


def _scalar(value, t, dtype: str):
    """A number as the attribute of a constant of type `t`: a located error when it does not
    fit (a fraction or an out-of-range integer for an integer type, a float overflow)."""
    if t.is_integer:
        if isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise located_error(f"'mtf.constant': {value!r} is not an integer but the element type is {dtype}",
                                MeshIRValueError)
        info = np.iinfo(t.dtype)
        if not info.min <= int(value) <= info.max:
            raise located_error(f"'mtf.constant': {value!r} does not fit element type {dtype} "
                                f"([{info.min}, {info.max}])", MeshIRValueError)
        return int(value)
    if dtype == "i1":
        return bool(value)
    try:
        return float(value)
    except OverflowError:
        raise located_error(f"'mtf.constant': {value!r} is too large for element type {dtype}",
                            MeshIRValueError) from None


@builds(ConstantOp)
def constant(value, dims=(), dtype: str = "f32", program=None):
    """A constant: a number broadcast over `dims`, or an array whose shape matches `dims`."""
    t = _type(dims, dtype, "mtf.constant")
    dtype = t.element_type
    if isinstance(value, (numbers.Real, np.integer, np.floating, np.bool_)):
        return build(ConstantOp, t, [], {"value": _scalar(value, t, dtype)}, program)
    try:
        array = np.asarray(value)
    except Exception as e:
        raise located_error(f"'mtf.constant': cannot turn {checks.describe(value)} into an array: {e}",
                            MeshIRTypeError) from None
    if array.dtype.kind not in "biuf":
        raise located_error(f"'mtf.constant': value must be a real number or an array of them, got "
                            f"{checks.describe(value)} ({array.dtype})", MeshIRTypeError)
    if array.shape != t.shape:
        raise located_error(f"'mtf.constant': value {checks.describe(value)} has shape {array.shape} but dims "
                            f"{list(t.names)} have shape {t.shape}", MeshIRValueError)
    return build(ConstantOp, t, [], {"value": array.astype(_STORAGE.get(dtype, np.float32))}, program)


@builds(IotaOp)
def iota(dims, dim: str, dtype: str = "i32", program=None):
    """Each element's index along `dim`, over a tensor with `dims`."""
    t = _type(dims, dtype, "mtf.iota")
    name = checks.dim_key(dim, "the dim of mi.iota")
    if name not in t.names:
        raise located_error(f"'mtf.iota': '{name}' is not one of the dims {list(t.names)}", MeshIRValueError)
    return build(IotaOp, t, [], {"dim": name}, program)


@builds(RandomUniformOp)
@runtime_arguments("seed")
def random_uniform(dims, seed, minval: float = 0.0, maxval: float = 1.0, dtype: str = "f32", program=None):
    """Uniform samples in [minval, maxval): a function of (seed, global index), so every
    layout gives the same numbers. `seed`: an int (fixed in the program) or a 0-d int32
    Tensor (new values for each value it takes: an argument, or `mi.fold_in(seed, step)`)."""
    t = _type(dims, dtype, "mtf.random_uniform")
    operands, attrs = seed_operands(seed, "mi.random_uniform")
    return build(RandomUniformOp, t, operands, {**attrs, "minval": checks.real(minval, "minval of mi.random_uniform"),
                                                "maxval": checks.real(maxval, "maxval of mi.random_uniform")}, program)


@builds(RandomNormalOp)
@runtime_arguments("seed")
def random_normal(dims, seed, mean: float = 0.0, stddev: float = 1.0, dtype: str = "f32", program=None):
    """Normal samples: a function of (seed, global index), the same under every layout;
    `seed` as for random_uniform."""
    t = _type(dims, dtype, "mtf.random_normal")
    operands, attrs = seed_operands(seed, "mi.random_normal")
    return build(RandomNormalOp, t, operands, {**attrs, "mean": checks.real(mean, "mean of mi.random_normal"),
                                               "stddev": checks.real(stddev, "stddev of mi.random_normal")}, program)


def int32_scalar(t: Tensor, what: str) -> Tensor:
    """`t` if it is a 0-d int32 Tensor (a runtime seed); a located error naming its type."""
    if t.dims or t.dtype != "i32":
        raise located_error(f"{what} must be an int or a 0-d int32 Tensor, got a Tensor of type {t.type}",
                            MeshIRTypeError)
    return t


def seed_operands(seed, what: str) -> tuple[list, dict]:
    """A seed as the op's operand (a 0-d int32 Tensor) or its `seed` attribute (an int)."""
    if isinstance(seed, Tensor):
        return [int32_scalar(seed, f"the seed of {what}")], {}
    if isinstance(seed, (float, np.floating, str, bytes)) or seed is None:
        raise located_error(f"the seed of {what} must be an int or a 0-d int32 Tensor, got "
                            f"{checks.describe(seed)}", MeshIRTypeError)
    return [], {"seed": checks.integer(seed, f"the seed of {what}")}
