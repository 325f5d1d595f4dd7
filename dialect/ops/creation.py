"""Ops that create tensors: constant, iota, random_uniform, random_normal."""
from __future__ import annotations

import numpy as np

from meshir._jax_private import ir

from ..diagnostics import VerifyError
from ..tensor_type import FLOAT_TYPES
from .base import MtfOp, mtf_op


@mtf_op
class ConstantOp(MtfOp):
    """`mtf.constant {value}`: a splat number, or dense elements shaped like the result."""

    OPERATION_NAME = "mtf.constant"
    OPERANDS = (0, 0)
    ATTRIBUTES = {"value": "any"}

    def values(self) -> np.ndarray:
        """The value as an array of the result's shape and dtype."""
        t = self.result_type
        attr = self.operation.attributes["value"]
        if isinstance(_as(ir.DenseElementsAttr, attr), ir.DenseElementsAttr):
            dense = ir.DenseElementsAttr(attr)
            array = np.array(dense) if not dense.is_splat else np.full(t.shape, np.array(dense.get_splat_value().value if hasattr(dense.get_splat_value(), "value") else dense.get_splat_value()))
            return np.asarray(array).reshape(t.shape).astype(t.dtype)
        scalar = _scalar_value(attr)
        return np.full(t.shape, scalar, dtype=t.dtype)

    def verify_op(self, mesh):
        t = self.result_type
        attr = self.operation.attributes["value"]
        if isinstance(_as(ir.DenseElementsAttr, attr), ir.DenseElementsAttr):
            shape = tuple(ir.ShapedType(ir.DenseElementsAttr(attr).type).shape)
            if shape != t.shape and not ir.DenseElementsAttr(attr).is_splat:
                raise VerifyError(f"value has shape {shape} but the result {t} has shape {t.shape}")
        elif _scalar_value(attr) is None:
            raise VerifyError(f"attribute 'value' must be a number or dense elements, got {attr}")


def _as(cls, attr):
    try:
        return cls(attr)
    except (ValueError, TypeError):
        return None


def _scalar_value(attr):
    for cls in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr):
        got = _as(cls, attr)
        if got is not None:
            return got.value
    return None


@mtf_op
class IotaOp(MtfOp):
    """`mtf.iota {dim}`: each element is its index along `dim`."""

    OPERATION_NAME = "mtf.iota"
    OPERANDS = (0, 0)
    ATTRIBUTES = {"dim": "str"}

    def verify_op(self, mesh):
        t = self.result_type
        self.dim_attr("dim", t, "result")
        if t.element_type == "i1":
            raise VerifyError("iota needs a numeric element type, got i1")


class RandomOp(MtfOp):
    """Random numbers as a function of (seed, global index): every layout gives the same values."""

    OPERANDS = (0, 0)

    def verify_op(self, mesh):
        t = self.result_type
        if t.element_type not in FLOAT_TYPES:
            raise VerifyError(f"random values need a float element type, got {t.element_type}")


@mtf_op
class RandomUniformOp(RandomOp):
    """`mtf.random_uniform {seed, minval, maxval}`: uniform in [minval, maxval)."""

    OPERATION_NAME = "mtf.random_uniform"
    ATTRIBUTES = {"seed": "int", "minval": "float", "maxval": "float"}
    OPTIONAL = frozenset({"minval", "maxval"})
    DEFAULTS = {"minval": 0.0, "maxval": 1.0}

    def verify_op(self, mesh):
        super().verify_op(mesh)
        if not self.attr("minval") < self.attr("maxval"):
            raise VerifyError(f"minval {self.attr('minval')} must be below maxval {self.attr('maxval')}")


@mtf_op
class RandomNormalOp(RandomOp):
    """`mtf.random_normal {seed, mean, stddev}`: normal samples."""

    OPERATION_NAME = "mtf.random_normal"
    ATTRIBUTES = {"seed": "int", "mean": "float", "stddev": "float"}
    OPTIONAL = frozenset({"mean", "stddev"})
    DEFAULTS = {"mean": 0.0, "stddev": 1.0}

    def verify_op(self, mesh):
        super().verify_op(mesh)
        if self.attr("stddev") < 0:
            raise VerifyError(f"stddev must be non-negative, got {self.attr('stddev')}")
