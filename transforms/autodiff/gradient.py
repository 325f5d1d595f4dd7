"""Reverse-mode differentiation of one `mtf` function: build `@<name>_grad` next to it.

    @f(args...) -> (..., y, ...)        y: the differentiated result (a float scalar, or any
                                        float tensor when its cotangent is an argument)
    @f_grad(args... [, cotangent]) -> (value, grad_<a>, grad_<b>, ...)

Steps:
1. Copy `@f` and put the copy in global form: layouts written on op results and `partial`
   markers are dropped and collectives (identities in global semantics) erased, so the
   gradient is an ordinary program that propagation partitions like any other. Argument
   annotations and the user's `mtf.shard` constraints are kept: they are statements about
   the forward values.
2. Activity: a value is active when it depends on a `wrt` argument through differentiable
   operands (rules.differentiable). Only active operands get cotangents.
3. Reverse sweep from the result, seeded with 1 (or the `cotangent` argument): each op's VJP
   rule (op_registry's "vjp" slot, rules.py) pulls its results' cotangents back to its active
   operands; contributions to a value used several times are added. A cotangent has its
   value's type without layout/partial.
4. Return the value and the gradients (zeros for an argument the result does not depend
   on, as in JAX), name them (`mtf.name`), and erase the forward ops nothing needs.
"""
from __future__ import annotations

from meshir._jax_private import func, ir
from meshir.dialect import op_registry
from meshir.dialect.call_graph import recursion_message, recursive_call
from meshir.dialect.diagnostics import Diagnostic, MeshIRError
from meshir.dialect.ops import OP_CLASSES, LoopOp, MtfOp, ShardOp, is_collective
from meshir.dialect.signature import NAME_ATTR, entry_function, function_name, functions, signature
from meshir.dialect.tensor_type import TensorType

from . import calls
from .emitter import Emitter, erase_dead_ops, free, type_of
from .rules import differentiable

COTANGENT_NAME = "cotangent"


class AutodiffError(MeshIRError):
    """A gradient that cannot be built. `reason` is the message without a location;
    `located` says whether the location points into the program (an op) or only at the
    function."""

    def __init__(self, location, reason: str, located: bool = False):
        diag = Diagnostic(location, reason)
        super().__init__(str(diag), [diag])
        self.reason, self.located = reason, located


def gradient_function(module_op, function: str | None = None, wrt=(), result: str | None = None,
                      cotangent: bool = False, with_value: bool = True, name: str | None = None):
    """Add the gradient function of `function` (default: the entry function) to `module_op`
    right after it and return it (a func.func op). See the module docstring."""
    fn = entry_function(module_op, function or None)
    if not len(fn.regions[0].blocks):
        raise AutodiffError(fn.location, f"@{function_name(fn)} is a declaration (no body): there is nothing to differentiate")
    cycle = recursive_call(module_op, [function_name(fn)])  # the callees are differentiated too
    if cycle is not None:
        call, names = cycle
        raise AutodiffError(call.location, recursion_message(names, "mtf-autodiff cannot differentiate recursive calls"),
                            located=True)
    sig = signature(fn)
    res_index = _choose_result(fn, sig, result, cotangent)
    wrt_indices = _choose_wrt(fn, sig, wrt)
    grad_name = name or f"{sig.function}_grad"
    if any(function_name(f) == grad_name for f in functions(module_op)):
        raise AutodiffError(fn.location, f"cannot create @{grad_name}: the module already has a function of that name")
    with fn.context, fn.location:
        grad = fn.operation.clone(ip=ir.InsertionPoint.after(fn))
        grad.attributes["sym_name"] = ir.StringAttr.get(grad_name)
        block = grad.regions[0].blocks[0]
        try:
            to_global_form(block)
            differentiate_block(grad, block, sig, [res_index], wrt_indices, cotangent, with_value)
        except BaseException:
            grad.erase()  # leave the module as it was
            raise
        erase_dead_ops(block)
    return grad.opview  # verified by the pass manager after mtf-autodiff


def differentiate_block(fn, block, sig, seeds, wrt, cotangent, with_value) -> "_Differentiator":
    """Rewrite `block` (of `fn`, in global form) into forward ops, then backward ops, then a
    return of (value,) gradients; see the module docstring. `seeds`: the result indices
    differentiated (with `cotangent`, one new cotangent argument each, in order)."""
    sweep = _Differentiator(fn, block, sig, seeds, wrt, cotangent, with_value)
    sweep.run()
    return sweep


def _choose_result(fn, sig, result, cotangent) -> int:
    names = sig.result_names
    if result:
        if result not in names:
            raise AutodiffError(fn.location, f"@{sig.function} has no result '{result}' "
                                             f"(results: {', '.join(names) or 'none'})")
        index = names.index(result)
    elif len(names) == 1:
        index = 0
    else:
        raise AutodiffError(fn.location, f"@{sig.function} has {len(names)} results "
                                         f"({', '.join(names) or 'none'}); say which one to differentiate (result=...)")
    t = sig.result_types[index]
    if not t.is_float:
        raise AutodiffError(fn.location, f"cannot differentiate result '{names[index]}' of @{sig.function}: its element "
                                         f"type is {t.element_type}, gradients need a float result")
    if t.rank and not cotangent:
        raise AutodiffError(fn.location, f"result '{names[index]}' of @{sig.function} is not a scalar ({t}): "
                                         f"differentiate a scalar (e.g. reduce_sum it to a loss), or give the result's "
                                         f"cotangent as an argument (cotangent=true)")
    return index


def _choose_wrt(fn, sig, wrt) -> list[int]:
    names = sig.arg_names
    known = ", ".join(names) or "none"
    if not wrt:
        chosen = [i for i, t in enumerate(sig.arg_types) if t.is_float]
        if not chosen:
            raise AutodiffError(fn.location, f"@{sig.function} has no float argument to differentiate with respect to "
                                             f"(arguments: {known})")
        return chosen
    chosen = []
    for n in wrt:
        if n not in names:
            raise AutodiffError(fn.location, f"cannot differentiate @{sig.function} with respect to '{n}': no such "
                                             f"argument (arguments: {known})")
        i = names.index(n)
        if i in chosen:
            raise AutodiffError(fn.location, f"argument '{n}' is named twice in wrt")
        t = sig.arg_types[i]
        if not t.is_float:
            raise AutodiffError(fn.location, f"cannot differentiate @{sig.function} with respect to '{n}': its element "
                                             f"type is {t.element_type}, gradients exist only for float arguments")
        chosen.append(i)
    return chosen


# -- 1. global form ----------------------------------------------------------------------------
def to_global_form(block, nested: bool = False) -> None:
    """Also in loop bodies, whose block arguments lose their layouts too (`nested`)."""
    for arg in block.arguments:
        t = _mtf_type(arg)
        if t is not None and (t.partial or nested):
            arg.set_type((free(t) if nested else t.without_partial()).to_mlir())
    for op in list(block.operations):
        for region in op.operation.regions:
            for inner in region.blocks:
                to_global_form(inner, nested=True)
        is_reshard = isinstance(op, ShardOp) and "reshard" in op.operation.attributes \
            and ir.BoolAttr(op.operation.attributes["reshard"]).value
        if is_collective(op) or is_reshard:
            op.operation.results[0].replace_all_uses_with(op.operation.operands[0])
            op.operation.erase()
        elif isinstance(op, ShardOp):  # the user's constraint: keep its layout
            op.operation.results[0].set_type(type_of(op.operation.results[0]).without_partial().to_mlir())
        elif isinstance(op, MtfOp):
            for r in op.operation.results:
                r.set_type(free(type_of(r)).to_mlir())
        elif op.operation.name == "func.call":
            _restore_call_operands(op)


def _restore_call_operands(call) -> None:
    """A callee keeps its signature: operands whose layout was dropped are constrained back."""
    module = call.operation.parent.parent
    callee_name = ir.FlatSymbolRefAttr(call.operation.attributes["callee"]).value
    callee = next((f for f in functions(module) if function_name(f) == callee_name), None)
    if callee is None:
        return
    inputs = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value).inputs
    for k, want in enumerate(inputs):
        operand = call.operation.operands[k]
        if operand.type != want:
            shard = ShardOp(want, [operand], {"reshard": ir.BoolAttr.get(True)}, loc=call.location,
                            ip=ir.InsertionPoint(call))
            call.operation.operands[k] = shard.result


def _mtf_type(value) -> TensorType | None:
    try:
        return TensorType.from_mlir(value.type)
    except ValueError:
        return None


def _is_float(value) -> bool:
    t = _mtf_type(value)
    return t is not None and t.is_float


# -- 2-4. activity, reverse sweep, signature -------------------------------------------------------
class _Differentiator:
    def __init__(self, grad, block, sig, seeds, wrt_indices, cotangent, with_value):
        self.grad, self.block, self.sig = grad, block, sig
        self.seeds, self.wrt, self.cotangent, self.with_value = seeds, wrt_indices, cotangent, with_value
        self.active: set = set()
        self.unsupported: set = set()
        self.saved: dict = {}  # first result of a call of @f_fwd -> its calls.SavedCall
        self.forward_ops = 0  # the block's first ops, before the backward ones (calls.py splits there)
        self.primal_results: list = []  # the values the forward returns

    def run(self) -> None:
        self._activity(list(self.block.operations)[:-1])
        self._save_call_forwards()
        ops = list(self.block.operations)
        ret, forward = ops[-1], ops[:-1]
        self.forward_ops, self.primal_results = len(forward), list(ret.operation.operands)
        em = Emitter(ir.InsertionPoint(ret), self.grad.location)
        cts = {}
        for index in self.seeds:
            y = ret.operation.operands[index]
            seed = self._seed(em, y)
            if y in self.active:
                cts[y] = em.add(cts[y], seed) if y in cts else seed
        for op in reversed(forward):
            self._pull_back(em, op, cts)
        em.loc = self.grad.location
        args = self.block.arguments
        grads = [cts[args[i]] if args[i] in cts else em.zeros(type_of(args[i])) for i in self.wrt]
        results = [ret.operation.operands[i] for i in self.seeds if self.with_value] + grads
        # Read again: a pull-back may have rebuilt the op defining a primal result (a scan
        # that now also saves its carries) and moved the return's uses to the new op.
        self.primal_results = list(ret.operation.operands)
        func.ReturnOp(results, ip=ir.InsertionPoint(ret))
        ret.operation.erase()
        self._set_signature(results)

    def _save_call_forwards(self) -> None:
        """Active plain calls become calls of their callee's forward-with-residuals."""
        for op in list(self.block.operations):
            if _differentiable_call(op) and not calls.is_remat(op) and calls.custom_vjp_of(op) is None \
                    and any(r in self.active for r in op.operation.results):
                new, saved = calls.save_forward(op, differentiate_callee)
                self.active.update(r for r in new.results if _is_float(r))
                self.saved[new.results[0]] = saved

    def _activity(self, forward) -> None:
        self.active = active_values({self.block.arguments[i] for i in self.wrt}, forward, self.unsupported)

    def _seed(self, em, y):
        t = free(type_of(y))
        if self.cotangent:
            return self.block.add_argument(t.to_mlir(), self.grad.location)
        return em.scalar(1.0, t.element_type)  # the result is a scalar (checked by _choose_result)

    def _pull_back(self, em, op, cts) -> None:
        pull_back(em, op, cts, self.active, self.unsupported, self.saved)

    def _set_signature(self, results) -> None:
        g, sig = self.grad, self.sig
        arg_names = list(sig.arg_names)
        for _ in self.seeds if self.cotangent else ():
            name = COTANGENT_NAME
            while name in arg_names:
                name += "_"
            arg_names.append(name)
        old = list(ir.ArrayAttr(g.attributes["arg_attrs"])) if "arg_attrs" in g.attributes else []
        arg_attrs = []
        for i, n in enumerate(arg_names):
            entries = {}
            if i < len(old):
                d = ir.DictAttr(old[i])
                entries = {d[k].name: d[k].attr for k in range(len(d))}
            entries[NAME_ATTR] = ir.StringAttr.get(n)
            arg_attrs.append(ir.DictAttr.get(entries))
        res_names = (["value"] * len(self.seeds) if self.with_value else []) + [f"grad_{sig.arg_names[i]}" for i in self.wrt]
        g.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
        g.attributes["res_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get({NAME_ATTR: ir.StringAttr.get(n)})
                                                      for n in res_names])
        g.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in self.block.arguments], [v.type for v in results]))


def _differentiable_call(op) -> bool:
    """A call of a function with a body (autodiff/calls.py differentiates through it)."""
    return op.operation.name == "func.call" and calls.callee_of(op) is not None


def active_values(active: set, forward, unsupported: set) -> set:
    """`active` and every float result depending on it through differentiable operands
    (a call: through any float operand); ops with no VJP reached by it go to `unsupported`."""
    active = set(active)
    for op in forward:
        operands = list(op.operation.operands)
        through_all = _differentiable_call(op)
        diff = tuple(i for i, v in enumerate(operands) if _is_float(v)) if through_all else differentiable(op)
        if diff is None:  # an op without a VJP (a call of a declaration, another dialect's op)
            if any(v in active for v in operands):
                unsupported.add(op.operation)
                active.update(r for r in op.operation.results if _is_float(r))
            continue
        if any(operands[i] in active for i in diff):
            active.update(r for r in op.operation.results if _is_float(r))
    return active


def pull_back(em, op, cts: dict, active: set, unsupported: set, saved: dict | None = None) -> None:
    """Add the cotangents of `op`'s active operands to `cts`, from its results' (an `mtf`
    op: its "vjp" rule; a call: autodiff/calls.py, with the residuals `saved` by the forward)."""
    results = list(op.operation.results)
    if not any(r in cts for r in results):
        return
    if op.operation in unsupported:
        detail = (" (its callee has no body)" if op.operation.name == "func.call" else
                  f" ({op_registry.missing_rule('vjp', op)})" if op.operation.name in OP_CLASSES else "")
        raise AutodiffError(op.location, f"cannot differentiate through '{op.operation.name}': it has no VJP rule"
                            + detail,
                            located=True)
    operands = list(op.operation.operands)
    em.loc = op.location
    if _differentiable_call(op):
        pulled = calls.pull_back(em, op, cts, (saved or {}).get(results[0]), differentiate_callee)
    else:
        wanted = frozenset(i for i in differentiable(op) if operands[i] in active)
        if not wanted:
            return
        pulled = op_registry.lookup("vjp", op).fn(em, op, _result_cotangents(em, op, cts), wanted)
    for i, c in pulled.items():
        if c is None or operands[i] not in active:
            continue
        v = operands[i]
        c = em.fit(c, free(type_of(v)))
        cts[v] = em.add(cts[v], c) if v in cts else c


def _result_cotangents(em, op, cts: dict):
    """The `ct` a VJP rule receives (rules.py)."""
    results = list(op.operation.results)
    if isinstance(op, LoopOp):
        return [cts.get(r) for r in results]
    if len(results) == 1:
        return cts[results[0]]
    return [cts[r] if r in cts else (em.zeros(free(type_of(r))) if _is_float(r) else None) for r in results]


def differentiate_callee(fn, block, sig):
    """The gradient of a callee's body in place (every float argument, cotangents of every
    float result): what calls.py splits into `@f_fwd` and `@f_bwd`."""
    to_global_form(block)
    return differentiate_block(fn, block, sig, seeds=calls.float_indices(sig.result_types),
                               wrt=calls.float_indices(sig.arg_types), cotangent=True, with_value=False)
