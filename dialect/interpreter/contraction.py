"""Rules of `mtf.einsum` and the reductions: names absent from the result are reduced."""
from __future__ import annotations

import string

import numpy as np

from ..diagnostics import located_error
from ..op_registry import rule
from ..ops import OP_CLASSES
from ..ops.contraction import EinsumOp, ReduceOp
from .arrays import align, is_float


def _accumulator(dtype) -> np.dtype:
    """Floats accumulate in at least float32; integers in their own type (wrapping)."""
    return np.dtype(np.float64 if dtype == np.float64 else np.float32) if is_float(dtype) else np.dtype(dtype)


@rule("interpret", EinsumOp)
def einsum(op, args):
    """Product of all operands, summed over the names not in the result (np.einsum)."""
    types, result = op.operand_types, op.result_type
    letters: dict[str, str] = {}
    for name in [n for t in types for n in t.names] + list(result.names):
        if name not in letters:
            if len(letters) == len(string.ascii_letters):
                raise located_error(op.location, f"einsum has more than {len(string.ascii_letters)} distinct names")
            letters[name] = string.ascii_letters[len(letters)]
    spec = ",".join("".join(letters[n] for n in t.names) for t in types)
    spec += "->" + "".join(letters[n] for n in result.names)
    acc = _accumulator(result.dtype)
    return np.einsum(spec, *(a.astype(acc, copy=False) for a in args), optimize=len(args) > 1)


#: NumPy's reduction for each REDUCTION kind (max/min propagate NaN).
REDUCE_FUNCTIONS = {"sum": np.sum, "max": np.max, "min": np.min}


@rule("interpret", *(cls for cls in OP_CLASSES.values() if issubclass(cls, ReduceOp)))
def reduce(op, args):
    """The op's REDUCTION over the operand names absent from the result."""
    src, result = op.input_type, op.result_type
    x = args[0].astype(_accumulator(args[0].dtype), copy=False)
    reduced = set(op.reduced_names)
    out = REDUCE_FUNCTIONS[op.REDUCTION](x, axis=tuple(i for i, n in enumerate(src.names) if n in reduced))
    return align(out, [n for n in src.names if n not in reduced], result.names)
