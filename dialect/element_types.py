"""The one place where what users write as an element type becomes MeshIR's name for it.

MeshIR's names are MLIR's (`f32 bf16 f16 f64 i32 i64 i1`); JAX and NumPy users write
`"float32"`, `np.float32`, `np.dtype("int32")`, `jnp.bfloat16`. Both are accepted and mapped
here; anything else is refused with the accepted names listed.
"""
from __future__ import annotations

import numpy as np

from .diagnostics import MeshIRTypeError, MeshIRValueError
from .tensor_type import ELEMENT_TYPES

#: NumPy dtype -> MeshIR element type name.
BY_DTYPE: dict[np.dtype, str] = {dtype: name for name, dtype in ELEMENT_TYPES.items()}
#: NumPy's names ("float32", "bfloat16", "bool", ...) -> MeshIR element type name.
BY_NUMPY_NAME: dict[str, str] = {dtype.name: name for dtype, name in BY_DTYPE.items()}


def accepted_names() -> str:
    """The accepted spellings, for error messages."""
    return f"{', '.join(ELEMENT_TYPES)} or NumPy's {', '.join(BY_NUMPY_NAME)}"


def element_type_name(value) -> str:
    """MeshIR's element type name for `value`: a MeshIR name, a NumPy dtype name, a NumPy
    dtype or scalar type (np.float32, jnp.bfloat16). MeshIRValueError for an unknown or
    unsupported type, MeshIRTypeError for something that is not a type at all."""
    if isinstance(value, str):
        if value in ELEMENT_TYPES:
            return value
        if value in BY_NUMPY_NAME:
            return BY_NUMPY_NAME[value]
        raise MeshIRValueError(f"unknown element type {value!r} (expected one of {accepted_names()})")
    dtype = _numpy_dtype(value)
    if dtype is None:
        raise MeshIRTypeError(f"element type must be a name like 'f32' or a NumPy dtype, got "
                              f"{type(value).__name__} {_short(value)} (expected one of {accepted_names()})")
    if dtype not in BY_DTYPE:
        raise MeshIRValueError(f"element type {dtype.name} is not supported (expected one of {accepted_names()})")
    return BY_DTYPE[dtype]


def _numpy_dtype(value) -> np.dtype | None:
    """The dtype of a NumPy dtype, a NumPy/JAX scalar type, or an object with a dtype; None
    otherwise (Python's `float`/`int` are not taken: their width is ambiguous)."""
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value)
    dtype = getattr(value, "dtype", None)  # jnp.bfloat16, jnp.float32: scalar types with a dtype
    if isinstance(value, type) and isinstance(dtype, np.dtype):
        return dtype
    return None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
