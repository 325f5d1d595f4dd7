"""Array helpers shared by the op rules: moving axes by name and choosing compute dtypes."""
from __future__ import annotations

import numpy as np

#: Narrow floats are computed in float32 and cast back (as XLA does on CPU).
_NARROW_FLOATS = ("bfloat16", "float16")


def align(array: np.ndarray, names, target) -> np.ndarray:
    """`array` (axes = `names`) with its axes moved into `target`'s name order and a size-1
    axis inserted for each target name it lacks: ready for NumPy broadcasting by name."""
    names, target = tuple(names), tuple(target)
    present = [n for n in target if n in names]
    moved = np.transpose(array, [names.index(n) for n in present])
    shape = [moved.shape[present.index(n)] if n in names else 1 for n in target]
    return moved.reshape(shape)


def broadcast_to_type(array: np.ndarray, names, result_type) -> np.ndarray:
    """`array` aligned to the result type's names and expanded to its shape."""
    return np.broadcast_to(align(array, names, result_type.names), result_type.shape)


def compute_dtype(dtype) -> np.dtype:
    """The dtype to compute in: float32 for bf16/f16, the dtype itself otherwise."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.name in _NARROW_FLOATS else dtype


def widen(array: np.ndarray) -> np.ndarray:
    """`array` in its compute dtype (a no-op unless it is bf16/f16)."""
    return array.astype(compute_dtype(array.dtype), copy=False)


def is_float(dtype) -> bool:
    """True for every floating dtype, bf16 (an ml_dtypes type NumPy calls 'V') included."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype.name in _NARROW_FLOATS
