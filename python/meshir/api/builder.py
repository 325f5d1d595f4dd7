"""Create one `mtf` op in a Program: location, attributes, immediate verification."""
from __future__ import annotations

import numpy as np

from meshir._jax_private import ir
from meshir.dialect import MeshIRError, TensorType, VerifyError
from meshir.dialect.diagnostics import format_location

from .locations import call_site_location, located_error  # noqa: F401  (re-exported)
from .tensor import Tensor


def program_of(operands, fallback=None):
    """The Program the operands belong to (all must share one)."""
    programs = {id(t.program): t.program for t in operands if isinstance(t, Tensor)}
    if len(programs) > 1:
        raise MeshIRError("operands come from different Programs")
    if programs:
        return next(iter(programs.values()))
    if fallback is not None:
        return fallback
    from .program import current_program

    return current_program()


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


def build(op_class, result_type: TensorType, operands=(), attributes=None, program=None) -> Tensor:
    """Insert `op_class` at the end of the program, verify it, return its result.

    A verifier failure erases the op and raises MeshIRError at the user's call site.
    """
    prog = program_of(operands, program)
    prog._check_open()
    with prog.context:
        loc = call_site_location()
    with prog.context, loc:
        attrs = {k: to_attribute(v) for k, v in (attributes or {}).items() if v is not None}
        op = op_class(result_type, [t.value for t in operands], attrs, loc=loc, ip=ir.InsertionPoint(prog.block))
        try:
            op.verify(prog.mesh)
        except VerifyError as e:
            op.operation.erase()
            raise MeshIRError(f"{format_location(loc)}: error: '{op_class.OPERATION_NAME}' op {e}") from None
    return Tensor(prog, op.result)
