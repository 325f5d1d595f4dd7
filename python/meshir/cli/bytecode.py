"""MLIR bytecode in and out (`--emit-bytecode`, bytecode input), with MLIR's own reader and
writer: `mtf` ops and `!mtf.tensor` types are unregistered-dialect IR, which bytecode keeps as
it keeps any op (names, operands, attributes, types as text), so they round-trip.

A bytecode file that MLIR cannot read (truncated, damaged, or from a newer MLIR) is reported
as an error at the file, with MLIR's message and its note on the producer's version.
"""
from __future__ import annotations

import io

from meshir._jax_private import ir
from meshir.dialect.context import get_context, mlir_error_diagnostics
from meshir.dialect.diagnostics import Diagnostic


def parse_bytecode(data: bytes, source_name: str):
    """(module op, []) or (None, diagnostics) for bytecode `data` read from `source_name`."""
    ctx = get_context()
    with ctx:
        try:
            module = ir.Module.parse(data, context=ctx)
        except ir.MLIRError as e:
            # MLIR names the buffer "-" and has no line: report at the file itself.
            where = ir.Location.file(source_name, 0, 0)
            diags = mlir_error_diagnostics(e, with_notes=True)
            if not diags:
                diags = [Diagnostic(where, "cannot read MLIR bytecode")]
            return None, [Diagnostic(where, d.message, d.severity) for d in diags]
        return module.operation, []


def write_bytecode(op) -> bytes:
    """The bytecode of `op` (a `builtin.module` operation)."""
    out = io.BytesIO()
    op.write_bytecode(out)
    return out.getvalue()
