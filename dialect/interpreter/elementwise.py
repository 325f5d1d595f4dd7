"""Rules of the elementwise ops. Operands broadcast by name into the result's name order;
bf16/f16 are computed in float32. Integer division and power follow StableHLO/XLA."""
from __future__ import annotations

import math

import numpy as np

from ..op_registry import OpRegistryError, register, rule
from ..ops.elementwise import BINARY_CLASSES, COMPARE_CLASSES, UNARY_CLASSES, CastOp, SelectOp
from .arrays import broadcast_to_type, is_float, widen


def _operands(op, args):
    """The operands aligned to the result's names, in their compute dtypes."""
    result = op.result_type
    return [widen(broadcast_to_type(a, t.names, result)) for a, t in zip(args, op.operand_types)]


def _int_div(a, b):
    """Division truncating toward zero; x / 0 = -1 and INT_MIN / -1 = INT_MIN, like XLA."""
    a, b = np.broadcast_arrays(a, b)
    zero = b == 0
    overflow = (b == -1) & (a == np.iinfo(a.dtype).min)
    safe = np.where(zero | overflow, 1, b).astype(b.dtype)
    q = a // safe
    q = q + ((a - q * safe != 0) & ((a < 0) != (safe < 0)))
    return np.where(zero, -1, np.where(overflow, a, q)).astype(a.dtype)


def _int_pow(a, b):
    """Integer power; a negative exponent gives 1 for a=1, ±1 for a=-1 and 0 otherwise."""
    a, b = np.broadcast_arrays(a, b)
    negative = b < 0
    p = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    odd = (b % 2) != 0
    small = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, small, p).astype(a.dtype)


def _float_or_int(float_fn, int_fn):
    return lambda a, b: float_fn(a, b) if is_float(a.dtype) else int_fn(a, b)


#: The NumPy function of each unary op, by class (a name the dialect lacks fails at import).
UNARY_FUNCTIONS = {UNARY_CLASSES[n]: fn for n, fn in {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "tanh": np.tanh,
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "sin": np.sin,
    "cos": np.cos,
    "sign": np.sign,
    "floor": np.floor,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),  # NumPy has no erf; C's, in float64
    "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "stop_gradient": lambda x: x,
    "optimization_barrier": lambda x: x,
}.items()}

BINARY_FUNCTIONS = {BINARY_CLASSES[n]: fn for n, fn in {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _float_or_int(np.divide, _int_div),
    "max": np.maximum,  # NaN-propagating
    "min": np.minimum,
    "pow": _float_or_int(np.power, _int_pow),
}.items()}

COMPARE_FUNCTIONS = {COMPARE_CLASSES[n]: fn for n, fn in {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}.items()}


def _register_table(classes: dict, functions: dict) -> None:
    """Register "apply `functions[cls]` to the aligned operands" for each op class of the
    family; a table that misses one of its ops fails at import."""
    missing = [cls.OPERATION_NAME for cls in classes.values() if cls not in functions]
    if missing:
        raise OpRegistryError(f"the interpreter has no elementwise function for {', '.join(missing)}")
    for cls in classes.values():
        register("interpret", cls, _applying(functions[cls]))


def _applying(fn):
    def apply(op, args):
        return fn(*_operands(op, args))

    return apply


_register_table(UNARY_CLASSES, UNARY_FUNCTIONS)
_register_table(BINARY_CLASSES, BINARY_FUNCTIONS)
_register_table(COMPARE_CLASSES, COMPARE_FUNCTIONS)


@rule("interpret", SelectOp)
def select(op, args):
    """`select(cond, on_true, on_false)` with all three broadcast by name."""
    cond, on_true, on_false = (broadcast_to_type(a, t.names, op.result_type) for a, t in zip(args, op.operand_types))
    return np.where(cond, on_true, on_false)


@rule("interpret", CastOp)
def cast(op, args):
    """Element type conversion. To i1: x != 0. Float to integer: truncate toward zero,
    NaN -> 0, out-of-range values saturate (XLA's behaviour on CPU and GPU)."""
    (x,) = _operands(op, args)
    target = op.result_type.dtype
    if target == np.bool_:
        return x != 0
    if target.kind == "i" and is_float(x.dtype):
        info = np.iinfo(target)
        t = np.trunc(x.astype(np.float64))
        high, low = t >= 2.0 ** (info.bits - 1), t < -(2.0 ** (info.bits - 1))
        inside = np.where(np.isnan(t) | high | low, 0, t).astype(target)
        return np.where(high, info.max, np.where(low, info.min, inside)).astype(target)
    return x.astype(target)
