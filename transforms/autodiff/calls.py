"""Differentiating through `func.call` without inlining: a forward that saves, a backward that reads.

For a callee `@f` the pass adds, once per module (private, next to `@f`):

    @f_fwd(args) -> (results..., residuals...)   @f's forward, also returning what @f_bwd reads
    @f_bwd(residuals..., cotangents) -> grads    cotangents: one per float result of @f;
                                                 grads: one per float argument of @f

The caller's gradient then treats a call like any op (docs/decisions.md, "Calls"):
- a plain call becomes a call of `@f_fwd` in the forward sweep, and `@f_bwd` reads its
  residuals in the backward sweep (saved, as without the call);
- a call marked `mtf.remat` stays a call of `@f`; the backward sweep calls `@f_fwd` again on
  the call's operands passed through `mtf.optimization_barrier` (so that no CSE, ours or
  XLA's, merges the recomputation with the forward), then `@f_bwd`;
- a call marked `mtf.custom_vjp = @g` (mi.custom_gradient) stays a call of `@f`; the backward
  sweep calls `@g(args..., results..., cotangents...)`, which returns one cotangent per float
  argument of `@f`.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import func, ir
from meshir.dialect.ops import UNARY_CLASSES
from meshir.dialect.signature import function_name, functions, signature
from meshir.dialect.attribute_names import CUSTOM_VJP as CUSTOM_VJP_ATTR, REMAT as REMAT_ATTR
from meshir.dialect.walk import clone_ops

from .emitter import erase_dead_ops, free, type_of



def callee_of(call):
    """The function a `func.call` calls when the module defines it (with a body), else None."""
    module = call.operation.parent.parent
    name = ir.FlatSymbolRefAttr(call.operation.attributes["callee"]).value
    fn = next((f for f in functions(module) if function_name(f) == name), None)
    return fn if fn is not None and len(fn.regions[0].blocks) else None


def float_indices(types) -> list[int]:
    return [i for i, t in enumerate(types) if t.is_float]


def custom_vjp_of(call) -> str | None:
    attrs = call.operation.attributes
    return ir.FlatSymbolRefAttr(attrs[CUSTOM_VJP_ATTR]).value if CUSTOM_VJP_ATTR in attrs else None


def is_remat(call) -> bool:
    return REMAT_ATTR in call.operation.attributes


@dataclass(frozen=True)
class SplitCallee:
    """The names of `@f_fwd` and `@f_bwd` and how many results `@f` has."""

    fwd: str
    bwd: str
    results: int


def split_callee(callee, differentiate) -> SplitCallee:
    """`@f_fwd` and `@f_bwd` of `callee`, built on first use. `differentiate(fn, block, sig)`:
    the gradient of a function's block in place, returning its sweep (gradient.py's driver,
    passed down: it calls this file for the calls it meets)."""
    name = function_name(callee)
    split = SplitCallee(f"{name}_fwd", f"{name}_bwd", len(signature(callee).result_types))
    module = callee.operation.parent
    if not any(function_name(f) == split.fwd for f in functions(module)):
        _build_split(callee, split, differentiate)
    return split


def _build_split(callee, split: SplitCallee, differentiate) -> None:
    sig = signature(callee)
    work = callee.operation.clone(ip=ir.InsertionPoint.after(callee))
    work.attributes["sym_name"] = ir.StringAttr.get(f"{split.fwd}_and_bwd")
    try:
        block = work.regions[0].blocks[0]
        sweep = differentiate(work, block, sig)
        ops = list(block.operations)
        forward, backward, ret = ops[:sweep.forward_ops], ops[sweep.forward_ops:-1], ops[-1]
        n_args = len(sig.arg_types)
        primal_args, cotangents = list(block.arguments)[:n_args], list(block.arguments)[n_args:]
        defined_forward = set(primal_args) | {r for op in forward for r in op.operation.results}
        residuals = []
        for op in backward + [ret]:
            for v in op.operation.operands:
                if v in defined_forward and v not in residuals:
                    residuals.append(v)
        attrs = {k: callee.attributes[k] for k in ("arg_attrs",) if k in callee.attributes}
        with callee.location:
            fwd = _new_function(split.fwd, callee, [a.type for a in primal_args],
                                [v.type for v in sweep.primal_results + residuals], attrs)
            mapping = dict(zip(primal_args, fwd.regions[0].blocks[0].arguments))
            _fill(fwd, forward, mapping, sweep.primal_results + residuals)
            bwd = _new_function(split.bwd, fwd, [v.type for v in residuals + cotangents],
                                [v.type for v in ret.operation.operands], {})
            mapping = dict(zip(residuals + cotangents, bwd.regions[0].blocks[0].arguments))
            _fill(bwd, backward, mapping, list(ret.operation.operands))
    finally:
        work.erase()


def _new_function(name, after, inputs, outputs, attrs):
    fn = func.FuncOp(name, (inputs, outputs), ip=ir.InsertionPoint.after(after))
    fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
    for k, v in attrs.items():
        fn.attributes[k] = v
    fn.add_entry_block()
    return fn


def _fill(fn, ops, mapping, results) -> None:
    block = fn.regions[0].blocks[0]
    ret_ip = ir.InsertionPoint(block)
    clone_ops(ops, mapping, ret_ip)
    func.ReturnOp([mapping[v] for v in results], ip=ret_ip)
    erase_dead_ops(block)


# -- the caller's side -----------------------------------------------------------------------------
@dataclass(frozen=True)
class SavedCall:
    """A call of `@f_fwd` that replaced a plain call of `@f`: what its backward needs."""

    split: SplitCallee
    residuals: list


def save_forward(call, differentiate):
    """Replace a plain call of `@f` by a call of `@f_fwd`; return the new call and its SavedCall."""
    split = split_callee(callee_of(call), differentiate)
    new = _call(split.fwd, call.operation.operands, call.location, ir.InsertionPoint(call))
    results = list(new.results)
    for old, value in zip(call.operation.results, results):
        old.replace_all_uses_with(value)
    call.operation.erase()
    return new, SavedCall(split, results[split.results:])


def pull_back(em, call, cts: dict, saved: SavedCall | None, differentiate) -> dict[int, ir.Value]:
    """Cotangents of the float operands of `call` (by operand index), given its results'.
    `saved`: the call is one of `@f_fwd` made by save_forward; None: a call of `@f` itself."""
    operands = list(call.operation.operands)
    results = list(call.operation.results)[:saved.split.results if saved else None]
    result_cts = [cts[r] if r in cts else em.zeros(free(type_of(r))) for r in results if type_of(r).is_float]
    custom = custom_vjp_of(call)
    if custom is not None:
        grads = _call(custom, operands + results + result_cts, em.loc, em.ip).results
    elif saved is not None:
        grads = _call(saved.split.bwd, saved.residuals + result_cts, em.loc, em.ip).results
    else:  # rematerialized: the forward again, behind barriers
        split = split_callee(callee_of(call), differentiate)
        barred = [_after(_barrier(v, em), result_cts, em) for v in operands]
        residuals = list(_call(split.fwd, barred, em.loc, em.ip).results)[split.results:]
        grads = _call(split.bwd, residuals + result_cts, em.loc, em.ip).results
    return dict(zip([i for i, v in enumerate(operands) if type_of(v).is_float], grads))


def _after(value, result_cts, em):
    """`value` made to depend on the first result cotangent, where it has a subset of that
    cotangent's names and no written layout: `select(ct == ct or ct != ct, value, 0)`, true
    everywhere (NaN included) but unknown to XLA. The recomputation then waits for the
    backward sweep to reach the call, and no CSE can merge it with the forward."""
    t = type_of(value)
    if not result_cts or not t.is_float or free(t) != t:
        return value
    ct = result_cts[0]
    if not set(t.names) <= set(type_of(ct).names):
        return value
    ct = em.fit(ct, t)
    always = em.binary("max", em.compare("eq", ct, ct), em.compare("ne", ct, ct))
    return em.select(always, value, 0.0)


def _barrier(value, em):
    barrier = UNARY_CLASSES["optimization_barrier"]
    return barrier(value.type, [value], {}, loc=em.loc, ip=em.ip).result


def _call(name: str, operands, loc, ip):
    """`func.call @name(operands)` at `ip`, with @name's result types."""
    callee = next(f for f in functions(ip.block.owner.parent) if function_name(f) == name)
    outputs = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value).results
    return func.CallOp(list(outputs), ir.FlatSymbolRefAttr.get(name), list(operands), loc=loc, ip=ip)
