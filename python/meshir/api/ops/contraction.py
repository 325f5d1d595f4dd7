"""Einsum and reductions, by name."""
from __future__ import annotations

import contextlib
import contextvars

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.ops import EinsumOp, ReduceMaxOp, ReduceMinOp, ReduceSumOp

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds, located_error, result_type
from meshir.api.programs.dims import Dim, as_dims
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["einsum", "reduce_sum", "reduce_max", "reduce_min"]

#: Dims an implicit einsum keeps although its operands share them (a pipeline stage's `stage`).
_MAPPED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("mapped_dims", default=frozenset())


@contextlib.contextmanager
def mapped_dims(*names: str):
    """Inside: an einsum without `output`/`reduced` keeps these dims, as it keeps a dim of
    one operand. Code run once per slot of a dim (`meshir.layers.pipeline`'s stage, whose
    parameters and activations both carry it) would otherwise sum the slots together."""
    token = _MAPPED.set(_MAPPED.get() | frozenset(names))
    try:
        yield
    finally:
        _MAPPED.reset(token)


@builds(EinsumOp)
def einsum(*operands: Tensor, output=None, reduced=None, dtype=None) -> Tensor:
    """Multiply the operands and sum over every name absent from `output` (Dims or names).

    Without `output`, the output Mesh-TensorFlow's `mtf.einsum` infers: every name that appears
    in exactly one operand, in order of first appearance (`einsum(x[b,d], w[d,f])` is `[b, f]`;
    a name shared by two or more operands is summed), and the dims of `mapped_dims` in force
    (a pipeline stage's `stage`). `reduced` (instead of `output`, Dims or
    names of the operands): the names to sum, every other name kept in order of first
    appearance (Mesh-TensorFlow's `reduced_dims`: `einsum(q[b,h,l,k], k[b,h,m,k],
    reduced=["k"])` is `[b, h, l, m]`). `dtype`: the result's element type, the operands'
    (default) or a wider float: bf16 operands then accumulate and return f32 (JAX's
    preferred_element_type)."""
    if not operands:
        raise located_error("'mtf.einsum' needs at least one operand", MeshIRTypeError)
    for i, o in enumerate(operands):
        checks.tensor(o, f"'mtf.einsum' operand #{i}")
    if output is not None and reduced is not None:
        raise located_error(f"'mtf.einsum': give `output` or `reduced`, not both (output={output!r}, "
                            f"reduced={reduced!r})", MeshIRTypeError)
    sizes, operands_of = _operand_dims(operands)
    if output is not None:
        out = as_dims(output, sizes, "einsum output")
        for d in out:
            if d.name not in sizes:
                raise located_error(f"'mtf.einsum' output dimension '{d.name}' appears in no operand "
                                    f"(operand dims: {', '.join(sizes)})", MeshIRValueError)
    elif reduced is not None:
        summed = {d.name for d in as_dims(reduced, sizes, "the reduced dims of mi.einsum")}
        missing = sorted(summed - set(sizes))
        if missing:
            raise located_error(f"'mtf.einsum' reduced dimension '{missing[0]}' appears in no operand "
                                f"(operand dims: {_sizes_text(sizes)})", MeshIRValueError)
        out = [Dim(n, s) for n, s in sizes.items() if n not in summed]
    else:
        mapped = _MAPPED.get()
        out = [Dim(n, s) for n, s in sizes.items() if len(operands_of[n]) == 1 or n in mapped]
    elem = operands[0].dtype if dtype is None else checks.element_type(dtype, "the dtype of mi.einsum")
    return build(EinsumOp, result_type("mtf.einsum", [(d.name, d.size) for d in out], elem), operands)


def _operand_dims(operands) -> tuple[dict[str, int], dict[str, list[int]]]:
    """({name: size} in order of first appearance, {name: the operands that have it}); a
    located MeshIRValueError naming the dim, both sizes and both operands when a name has two
    sizes (one name is one dimension: the output could not say which size it has)."""
    sizes: dict[str, int] = {}
    operands_of: dict[str, list[int]] = {}
    for i, o in enumerate(operands):
        for name, size in zip(o.names, o.shape):
            if name in sizes and sizes[name] != size:
                first = operands_of[name][0]
                raise located_error(
                    f"'mtf.einsum': dimension '{name}' has size {sizes[name]} in operand #{first} "
                    f"({operands[first].type}) and size {size} in operand #{i} ({o.type}); one name is one "
                    f"dimension (mi.rename one of them)", MeshIRValueError)
            sizes.setdefault(name, size)
            operands_of.setdefault(name, []).append(i)
    return sizes, operands_of


def _sizes_text(sizes: dict[str, int]) -> str:
    return ", ".join(f"{n}={s}" for n, s in sizes.items()) or "none"


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
