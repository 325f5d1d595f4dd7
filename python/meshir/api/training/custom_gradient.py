"""`mi.custom_gradient`: a block with a user-written VJP (Mesh-TensorFlow's `custom_gradient`).

    def clip_vjp(inputs, outputs, cotangents):       # Tensors; one cotangent per input
        (x,), (y,), (ct,) = inputs, outputs, cotangents
        return [mi.minimum(mi.maximum(ct, -1.0), 1.0)]
    clipped = mi.custom_gradient(lambda x: x * 1.0, clip_vjp)
    y = clipped(x)

The block becomes a private function called with `mtf.custom_vjp = @<vjp>`; the VJP becomes
a function of (inputs, outputs, cotangents of the float outputs) that `mtf-autodiff` calls
in the backward pass (transforms/autodiff/calls.py). Each returned cotangent must have its
input's dims (any order), sizes, element type and any layout both state; None means zero.
"""
from __future__ import annotations

import functools

from meshir._jax_private import ir
from meshir.dialect import MeshIRTypeError, MeshIRValueError
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.attribute_names import CUSTOM_VJP

from meshir.api import _checks as checks
from meshir.api.ops.creation import constant
from meshir.api.programs._locations import located_error
from meshir.api.programs._subfunction import Subfunction, call, function_symbol, trace
from meshir.api.programs.tensor import Tensor

__all__ = ["custom_gradient"]


def custom_gradient(fn, vjp):
    """`fn` (Tensors -> Tensors) whose gradient is `vjp(inputs, outputs, cotangents)`:
    tuples of Tensors (cotangents: one per float output), returning one cotangent per input
    Tensor (a sequence, or a Tensor for one input; None for zero or a non-float input)."""
    for f, what in ((fn, "function"), (vjp, "vjp")):
        if not callable(f):
            raise located_error(f"mi.custom_gradient needs a {what}, got {checks.describe(f)}", MeshIRTypeError)
    name = function_symbol(fn)
    what = f"mi.custom_gradient({name})"

    @functools.wraps(fn)
    @reports_at_call_site
    def with_custom_gradient(*args, **kwargs):
        sub, caller, leaves, out_tree, outputs = trace(fn, args, kwargs, what, name)
        try:
            symbol = _vjp_function(caller, vjp, what, f"{sub.symbol}_vjp", leaves, outputs)
        except BaseException:
            sub.discard()
            raise
        with caller.context:
            return call(sub, caller, leaves, out_tree, {CUSTOM_VJP: ir.FlatSymbolRefAttr.get(symbol)})

    return with_custom_gradient


def _vjp_function(caller, vjp, what: str, name: str, leaves, outputs) -> str:
    float_outputs = [t for t in outputs if t.type.is_float]
    types = [t.type for t in leaves] + [t.type for t in outputs] + [t.type.without_layout() for t in float_outputs]
    vsub = Subfunction(caller, what, name, types)
    try:
        args = vsub.arguments
        n, m = len(leaves), len(outputs)
        grads = vsub.run(vjp, tuple(args[:n]), tuple(args[n:n + m]), tuple(args[n + m:]))
        vsub.finish(_checked(vsub, what, grads, leaves))
    except BaseException:
        vsub.discard()
        raise
    return vsub.symbol


def _checked(vsub, what: str, grads, leaves) -> list[Tensor]:
    """The cotangents of the float inputs, each checked against its input."""
    if isinstance(grads, Tensor) or grads is None:
        grads = [grads]
    if not isinstance(grads, (list, tuple)):
        raise located_error(f"{what}: the vjp must return one cotangent per input, got {checks.describe(grads)}",
                            MeshIRTypeError)
    if len(grads) != len(leaves):
        raise located_error(f"{what}: the vjp returned {len(grads)} cotangents for {len(leaves)} inputs",
                            MeshIRValueError)
    out = []
    for i, (g, x) in enumerate(zip(grads, leaves)):
        if not x.type.is_float:
            if g is not None:
                raise located_error(f"{what}: input #{i} ({x.type}) is not a float: its cotangent must be None",
                                    MeshIRValueError)
            continue
        if g is None:
            out.append(constant(0.0, x.dims, x.dtype, program=vsub))
            continue
        if not isinstance(g, Tensor) or g.program is not vsub:
            raise located_error(f"{what}: cotangent #{i} must be a Tensor computed in the vjp, got {checks.describe(g)}",
                                MeshIRTypeError)
        want, got = x.type, g.type
        if sorted((d.name, d.size) for d in got.dims) != sorted((d.name, d.size) for d in want.dims):
            raise located_error(f"{what}: cotangent #{i} has dims {got.without_layout()}, but input #{i} has "
                                f"{want.without_layout()}", MeshIRValueError)
        if got.element_type != want.element_type:
            raise located_error(f"{what}: cotangent #{i} has element type {got.element_type}, but input #{i} has "
                                f"{want.element_type}", MeshIRValueError)
        for d in got.dims:
            axes = want.dim(d.name).axes
            if d.axes is not None and axes is not None and d.axes != axes:
                raise located_error(f"{what}: cotangent #{i} lays '{d.name}' out over {d.axes}, but input #{i} over "
                                    f"{axes}", MeshIRValueError)
        out.append(g)
    return out
