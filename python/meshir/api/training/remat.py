"""`mi.remat`: a block whose forward is recomputed in the backward pass instead of saved.

    @mi.remat
    def layer(x, w):                 # builds ops on Tensors, e.g. one Transformer layer
        return mi.relu(mi.einsum(x, w, output=[batch, d_model]))
    y = layer(x, w)                  # a call of a private function, marked `mtf.remat`

Mesh-TensorFlow's `recompute_grad`, JAX's `jax.checkpoint`. Without autodiff it is a plain
call; `mtf-autodiff` keeps only the block's inputs for the backward pass and runs the block
again there, behind `stablehlo.optimization_barrier`s (transforms/autodiff/calls.py).
"""
from __future__ import annotations

import functools

from meshir._jax_private import ir
from meshir.dialect import MeshIRTypeError, MeshIRValueError
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.attribute_names import REMAT

from meshir.api import _checks as checks
from meshir.api.programs._locations import located_error
from meshir.api.programs._subfunction import call, function_symbol, trace

__all__ = ["remat"]


def remat(fn):
    """`fn` (a Python function of Tensors and static values, returning Tensors) as a block
    recomputed in the backward pass. Usable as a decorator."""
    if not callable(fn):
        raise located_error(f"mi.remat needs a function, got {checks.describe(fn)}", MeshIRTypeError)
    name = function_symbol(fn)

    @functools.wraps(fn)
    @reports_at_call_site
    def rematerialized(*args, **kwargs):
        sub, caller, leaves, out_tree, _ = trace(fn, args, kwargs, f"mi.remat({name})", name)
        if not any(t.type.is_float for t in leaves):
            sub.discard()
            got = ", ".join(repr(t) for t in leaves) or "no Tensor"
            raise located_error(f"mi.remat({name}): no float Tensor argument to differentiate (got {got}): there is "
                                f"nothing to recompute in a backward pass", MeshIRValueError)
        with caller.context:
            return call(sub, caller, leaves, out_tree, {REMAT: ir.UnitAttr.get()})

    return rematerialized
