"""Ops that create tensors: constant, iota, random_uniform, random_normal."""
from __future__ import annotations

import re

import numpy as np

from meshir._jax_private import ir

from ..diagnostics import VerifyError
from ..tensor_type import FLOAT_TYPES, INTEGER_TYPES, bfloat16
from .base import MtfOp, _try, mtf_op


@mtf_op
class ConstantOp(MtfOp):
    """`mtf.constant {value}`: a splat number, or dense elements shaped like the result."""

    OPERATION_NAME = "mtf.constant"
    PRECISION = "weak"
    MEMORY = "fused"
    FACTORS = "none"  # each value keeps the layout it is given
    OPERANDS = (0, 0)
    ATTRIBUTES = {"value": "any"}

    def values(self) -> np.ndarray:
        """The value as an array of the result's shape and dtype.

        A scalar attribute or a splat dense attribute (of any shape) fills the result; other
        dense elements are reshaped row-major to the result's shape.
        """
        t = self.result_type
        attr = self.operation.attributes["value"]
        dense = _try(ir.DenseElementsAttr, attr)
        if dense is None:
            return np.full(t.shape, _scalar_value(attr), dtype=t.dtype)
        if dense.is_splat:
            return np.full(t.shape, _scalar_value(dense.get_splat_value()), dtype=t.dtype)
        return dense_to_numpy(dense).reshape(t.shape).astype(t.dtype)

    def verify_op(self, mesh):
        t = self.result_type
        attr = self.operation.attributes["value"]
        if isinstance(_try(ir.DenseElementsAttr, attr), ir.DenseElementsAttr):
            shaped = ir.ShapedType(ir.DenseElementsAttr(attr).type)
            shape = tuple(shaped.shape)
            if shape != t.shape and not ir.DenseElementsAttr(attr).is_splat:
                raise VerifyError(f"value has shape {shape} but the result {t} has shape {t.shape}")
            kind = _element_kind(shaped.element_type)
            want = "float" if t.is_float else ("i1" if t.element_type == "i1" else "integer")
            if kind != want:
                raise VerifyError(f"value has {kind} elements ({shaped.element_type}) but the result element type is {t.element_type}")
            return
        scalar = _scalar_value(attr)
        if scalar is None:
            raise VerifyError(f"attribute 'value' must be a number or dense elements, got {attr}")
        if t.element_type in INTEGER_TYPES and float(scalar) != int(scalar):
            raise VerifyError(f"value {scalar} is not an integer but the result element type is {t.element_type}")

    def splat_value(self):
        """The one number every element holds (a scalar or splat `value`), else None.

        An integer attribute on a float result is returned as a float (+0.0 for 0), so that
        the sign of a zero is the one the tensor holds."""
        attr = self.operation.attributes["value"]  # the bindings give the concrete class
        if isinstance(attr, ir.DenseElementsAttr):
            if not attr.is_splat:
                return None
            attr = attr.get_splat_value()
        if not isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
            return None
        value = attr.value
        if isinstance(value, bool):
            return value
        return float(value) if self.result_type.is_float else value


def dense_to_numpy(dense) -> np.ndarray:
    """The elements of a non-splat DenseElementsAttr as a NumPy array of its shape.

    The bindings' buffer protocol covers the standard types; bf16 has none, so its elements
    are read from the attribute's text (a list of numbers and `0x` bit patterns, or one
    `"0x..."` string of raw little-endian bytes for large attributes).
    """
    shape = tuple(ir.ShapedType(dense.type).shape)
    array = np.array(dense)
    if array.dtype != object:
        return array.reshape(shape)
    elem = str(ir.ShapedType(dense.type).element_type)
    if elem != "bf16":
        raise ValueError(f"cannot read dense elements of type {elem}")
    bf16 = bfloat16()
    body = str(dense).split(":")[0]
    raw = re.search(r'"0x([0-9A-Fa-f]*)"', body)
    if raw:
        return np.frombuffer(bytes.fromhex(raw.group(1)), dtype=bf16).reshape(shape)
    tokens = re.findall(r"0x[0-9A-Fa-f]+|[-+]?(?:[0-9]*\.)?[0-9]+(?:[eE][-+]?[0-9]+)?", body)
    bits = [np.uint16(int(tok, 16)).view(bf16) if tok.startswith("0x") else bf16.type(float(tok)) for tok in tokens]
    return np.array(bits, dtype=bf16).reshape(shape)


def _element_kind(element_type: ir.Type) -> str:
    """'float', 'i1' or 'integer': what a dense attribute's elements can faithfully hold."""
    text = str(element_type)
    if text == "i1":
        return "i1"
    return "integer" if text.startswith(("i", "si", "ui")) else "float"


def _scalar_value(attr):
    for cls in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr):
        got = _try(cls, attr)
        if got is not None:
            return got.value
    return None


@mtf_op
class IotaOp(MtfOp):
    """`mtf.iota {dim}`: each element is its index along `dim`."""

    OPERATION_NAME = "mtf.iota"
    PRECISION = "weak"
    MEMORY = "fused"
    FACTORS = "none"  # each value keeps the layout it is given
    OPERANDS = (0, 0)
    ATTRIBUTES = {"dim": "str"}

    def verify_op(self, mesh):
        t = self.result_type
        self.dim_attr("dim", t, "result")
        if t.element_type == "i1":
            raise VerifyError("iota needs a numeric element type, got i1")


class RandomOp(MtfOp):
    """Random numbers as a function of (seed, global index): every layout gives the same values.

    The seed is an attribute (fixed when the program is built) or an operand, a 0-d i32
    tensor (an argument, or derived from the step), so each call can draw new values; one
    seed value gives the same numbers either way."""

    OPERANDS = (0, 1)
    FACTORS = "none"
    PRECISION = "weak"
    OPTIONAL = frozenset({"seed"})

    def seed_operand(self):
        """The seed tensor, or None when the seed is the `seed` attribute."""
        return self.operation.operands[0] if len(self.operation.operands) else None

    def verify_op(self, mesh):
        t = self.result_type
        if t.element_type not in FLOAT_TYPES:
            raise VerifyError(f"random values need a float element type, got {t.element_type}")
        has_attr = "seed" in self.operation.attributes
        if self.seed_operand() is None and not has_attr:
            raise VerifyError("needs a seed: the attribute `seed` or a 0-d i32 operand")
        if self.seed_operand() is not None:
            if has_attr:
                raise VerifyError("has both a seed operand and a `seed` attribute; give one")
            seed = self.operand_types[0]
            if seed.dims or seed.element_type != "i32":
                raise VerifyError(f"the seed operand must be a 0-d i32 tensor, got {seed}")


@mtf_op
class RandomUniformOp(RandomOp):
    """`mtf.random_uniform {seed, minval, maxval}` or `mtf.random_uniform(%seed) {minval, maxval}`:
    uniform in [minval, maxval)."""

    OPERATION_NAME = "mtf.random_uniform"
    ATTRIBUTES = {"seed": "int", "minval": "float", "maxval": "float"}
    OPTIONAL = frozenset({"seed", "minval", "maxval"})
    DEFAULTS = {"minval": 0.0, "maxval": 1.0}

    def verify_op(self, mesh):
        super().verify_op(mesh)
        if not self.attr("minval") < self.attr("maxval"):
            raise VerifyError(f"minval {self.attr('minval')} must be below maxval {self.attr('maxval')}")


@mtf_op
class RandomNormalOp(RandomOp):
    """`mtf.random_normal {seed, mean, stddev}` or `mtf.random_normal(%seed) {mean, stddev}`:
    normal samples."""

    OPERATION_NAME = "mtf.random_normal"
    ATTRIBUTES = {"seed": "int", "mean": "float", "stddev": "float"}
    OPTIONAL = frozenset({"seed", "mean", "stddev"})
    DEFAULTS = {"mean": 0.0, "stddev": 1.0}

    def verify_op(self, mesh):
        super().verify_op(mesh)
        if self.attr("stddev") < 0:
            raise VerifyError(f"stddev must be non-negative, got {self.attr('stddev')}")
