"""Einsum and reductions, by name."""
from __future__ import annotations

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.ops import EinsumOp, ReduceMaxOp, ReduceMinOp, ReduceSumOp

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds, located_error, result_type
from meshir.api.programs.dims import as_dims
from meshir.api.ops.elementwise import broadcast_dims
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["einsum", "reduce_sum", "reduce_max", "reduce_min"]


@builds(EinsumOp)
def einsum(*operands: Tensor, output, dtype=None) -> Tensor:
    """Multiply the operands and sum over every name absent from `output` (Dims or names).
    `dtype`: the result's element type, the operands' (default) or a wider float: bf16
    operands then accumulate and return f32 (JAX's preferred_element_type)."""
    if not operands:
        raise located_error("'mtf.einsum' needs at least one operand", MeshIRTypeError)
    for i, o in enumerate(operands):
        checks.tensor(o, f"'mtf.einsum' operand #{i}")
    sizes = {d.name: d.size for d in broadcast_dims("mtf.einsum", [o.type for o in operands])}
    out = as_dims(output, sizes, "einsum output")
    for d in out:
        if d.name not in sizes:
            raise located_error(f"'mtf.einsum' output dimension '{d.name}' appears in no operand "
                                f"(operand dims: {', '.join(sizes)})", MeshIRValueError)
    elem = operands[0].dtype if dtype is None else checks.element_type(dtype, "the dtype of mi.einsum")
    return build(EinsumOp, result_type("mtf.einsum", [(d.name, d.size) for d in out], elem), operands)


def _reduce(op_class, x: Tensor, output, over) -> Tensor:
    checks.tensor(x, f"the operand of {op_class.OPERATION_NAME}")
    if output is not None and over is not None:
        raise located_error(f"'{op_class.OPERATION_NAME}': give `output` or `over`, not both (output={output!r}, "
                            f"over={over!r})", MeshIRTypeError)
    sizes = dict(zip(x.names, x.shape))
    if output is not None:
        keep = [d.name for d in as_dims(output, sizes, f"{op_class.OPERATION_NAME} output")]
    else:
        reduced = {d.name for d in as_dims(x.names if over is None else over, sizes, f"{op_class.OPERATION_NAME} over")}
        keep = [n for n in x.names if n not in reduced]
    return build(op_class, result_type(op_class.OPERATION_NAME, [(n, sizes[n]) for n in keep], x.dtype), [x])


@builds(ReduceSumOp)
def reduce_sum(x: Tensor, output=None, over=None) -> Tensor:
    """Sum over the dims in `over` (or all dims absent from `output`; default: all)."""
    return _reduce(ReduceSumOp, x, output, over)


@builds(ReduceMaxOp)
def reduce_max(x: Tensor, output=None, over=None) -> Tensor:
    """Maximum over `over` (or the dims absent from `output`; default: all)."""
    return _reduce(ReduceMaxOp, x, output, over)


@builds(ReduceMinOp)
def reduce_min(x: Tensor, output=None, over=None) -> Tensor:
    """Minimum over `over` (or the dims absent from `output`; default: all)."""
    return _reduce(ReduceMinOp, x, output, over)
