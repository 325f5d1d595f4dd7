"""Binding and checking the arguments a user passes to a function."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..call_site import without_location
from ..diagnostics import MeshIRError, MeshIRTypeError, MeshIRValueError
from ..signature import FunctionSignature
from ..tensor_type import TensorType
from .arrays import is_float


def shape_text(t: TensorType) -> str:
    """`[batch=8, d_model=16]`: a global shape by dimension names."""
    return "[" + ", ".join(f"{d.name}={d.size}" for d in t.dims) + "]"


def _kind(dtype: np.dtype) -> str:
    """'b' bool, 'i' integer (signed or not), 'f' float (bf16 included), else NumPy's kind."""
    if is_float(dtype):
        return "f"
    return "i" if dtype.kind in "iu" else dtype.kind


#: Element type kind -> the input kinds it accepts (bool < integer < float; no narrowing of kind).
_ACCEPTS = {"b": "b", "i": "bi", "f": "bif"}


def check_kind(dtype, t: TensorType, what: str) -> None:
    """A MeshIRTypeError naming `what` unless elements of `dtype` may stand for `t`'s."""
    dtype = np.dtype(dtype)
    if _kind(dtype) not in _ACCEPTS[_kind(t.dtype)]:
        raise MeshIRTypeError(f"{what}: expected element type {t.element_type} ({t.dtype.name}), got {dtype.name}")


def check_kind_and_shape(dtype, shape, t: TensorType, what: str) -> None:
    """A MeshIRError naming `what` unless an array of `dtype` and `shape` may stand for `t`.

    Reads no values, so the PJRT runtime checks jax.Arrays with it without copying them to
    the host; `convert_input` applies it to everything else.
    """
    check_kind(dtype, t, what)
    if tuple(shape) != t.shape:
        raise MeshIRValueError(f"{what}: expected global shape {shape_text(t)}, got {tuple(shape)}")


def convert_input(value, t: TensorType, what: str) -> np.ndarray:
    """`value` as an array of `t`'s global shape and dtype, or a MeshIRError naming `what`.

    Python scalars, lists, NumPy arrays and jax.Arrays are accepted. A value converts when its
    kind of number fits (bool -> integer -> float): float64 into f32 is fine, float into an
    integer argument is refused, and only bools go into i1. Integers must fit the target.
    """
    try:
        array = np.asarray(value)
    except Exception as e:
        raise MeshIRTypeError(f"{what}: cannot convert {type(value).__name__} to an array: "
                              f"{without_location(str(e))}") from None
    if array.dtype == object:  # not numbers: name what was given
        raise MeshIRTypeError(f"{what}: expected element type {t.element_type} ({t.dtype.name}), got object "
                              f"({type(value).__name__} {_short(value)})")
    try:
        check_kind_and_shape(array.dtype, array.shape, t, what)
    except MeshIRError as e:
        if isinstance(value, np.ndarray):
            raise
        raise type(e)(f"{e} ({type(value).__name__} {_short(value)})") from None
    check_values_fit(array, t, what)
    with np.errstate(over="ignore"):  # an overflow is reported below, naming the value
        converted = array.astype(t.dtype, copy=False)
    check_floats_fit(array, converted, t, what)
    return converted


def check_values_fit(array: np.ndarray, t: TensorType, what: str) -> None:
    """A MeshIRValueError naming `what` when integers in `array` do not fit `t`'s integer type."""
    target = t.dtype
    if _kind(target) == "i" and _kind(array.dtype) == "i" and array.dtype != target and array.size:
        info = np.iinfo(target)
        low, high = array.min(), array.max()
        if low < info.min or high > info.max:
            raise MeshIRValueError(
                f"{what}: values in [{low}, {high}] do not fit element type {t.element_type}"
            )


def check_floats_fit(array: np.ndarray, converted: np.ndarray, t: TensorType, what: str) -> None:
    """A MeshIRValueError naming `what` and the first value when a finite number became an
    infinity in `t`'s float type (1e40 into f32, 70000 into f16): a silent inf is a wrong
    answer. Infinities and NaNs pass through; underflow to zero or a subnormal is rounding."""
    if _kind(t.dtype) != "f" or converted.dtype == array.dtype or not array.size:
        return
    overflowed = np.isinf(converted) & ~np.isinf(array)  # a NaN stays NaN
    if overflowed.any():
        where = tuple(int(i) for i in np.argwhere(overflowed)[0])
        count = int(overflowed.sum())
        largest = float(_finfo(t.dtype).max)
        raise MeshIRValueError(
            f"{what}: value {array[where].item()!r}{f' at index {where}' if where else ''} does not fit element "
            f"type {t.element_type} (largest finite value {largest:.8g}; {count} value{'s' if count > 1 else ''} "
            "would become inf); scale it, or give the argument a wider element type"
        )


def _finfo(dtype: np.dtype):
    """np.finfo, or ml_dtypes' for the floats NumPy does not know (bf16)."""
    try:
        return np.finfo(dtype)
    except ValueError:
        return ml_dtypes.finfo(dtype)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def bind_arguments(sig: FunctionSignature, args, kwargs) -> list:
    """Match positional and named arguments to the signature's argument names, in order."""
    names = sig.arg_names
    known = ", ".join(names) or "none"
    if len(args) > len(names):
        raise MeshIRTypeError(
            f"@{sig.function} takes {len(names)} argument{'s' if len(names) != 1 else ''} "
            f"({known}), got {len(args)} positional"
        )
    bound = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise MeshIRTypeError(f"@{sig.function} has no argument '{name}' (arguments: {known})")
        if name in bound:
            raise MeshIRTypeError(f"argument '{name}' of @{sig.function} is given twice (by position and by name)")
        bound[name] = value
    missing = [n for n in names if n not in bound]
    if missing:
        raise MeshIRTypeError(
            f"@{sig.function} is missing argument{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(n) for n in missing)} (arguments: {known})"
        )
    return [bound[n] for n in names]


def check_inputs(sig: FunctionSignature, inputs) -> list[np.ndarray]:
    """Every input converted to its argument's type, or a MeshIRError naming the argument."""
    inputs = list(inputs)
    if len(inputs) != len(sig.arg_names):
        raise MeshIRTypeError(f"@{sig.function} takes {len(sig.arg_names)} arguments, got {len(inputs)}")
    return [
        convert_input(value, t, f"argument '{name}' of @{sig.function}")
        for value, name, t in zip(inputs, sig.arg_names, sig.arg_types)
    ]
