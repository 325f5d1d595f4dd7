"""Python values as MLIR attributes, the one conversion every op builder uses."""
from __future__ import annotations

import numpy as np

from meshir._jax_private import ir

from .diagnostics import MeshIRError


def to_attribute(value) -> ir.Attribute:
    """A Python value as an MLIR attribute (needs an active context)."""
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, (int, np.integer)):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if isinstance(value, (float, np.floating)):
        return ir.FloatAttr.get(ir.F64Type.get(), float(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        return ir.ArrayAttr.get([ir.StringAttr.get(v) for v in value])
    if isinstance(value, np.ndarray):
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value))
    raise MeshIRError(f"cannot turn {value!r} into an attribute")
