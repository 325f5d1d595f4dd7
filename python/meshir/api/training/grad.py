"""`grad` and `value_and_grad`: gradient programs built by the `mtf-autodiff` pass.

    g = mi.value_and_grad(prog, wrt=["w1", "w2"])
    loss, g_w1, g_w2 = mi.interpret(g, x=x, w1=w1, w2=w2)
    exe = mi.compile(g, layout={"batch": "x", "d_ff": "y"})   # partitioned like any program

The gradient is an ordinary `mtf` program with free layouts: propagation lays it out and
collective insertion adds the reductions it needs (e.g. the all-reduce of a weight gradient
over the batch axis).
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect import MeshIRError, MeshIRTypeError, get_context
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.signature import NamedBySignature, entry_function, function_name, functions, signature
from meshir.transforms import Pipeline
from meshir.transforms.autodiff import AutodiffError
from meshir.transforms.passes.autodiff import AutodiffPass
from meshir.transforms.passes.inline_calls import InlineCallsPass

from meshir.api import _checks as checks
from meshir.api.programs import precision
from meshir.api.programs._locations import located_error


class GradientProgram(NamedBySignature):
    """A gradient function in its own module; interpret and compile it like a Program.

    `argument_names` are the program's (plus `cotangent` when it was asked for),
    `result_names` are `value` (for value_and_grad) then `grad_<argument>` for each `wrt`.
    `mesh`: the mesh the differentiated program was given, with its devices (None for a module).
    """

    def __init__(self, module, name: str, mesh=None):
        self.module = module
        self.name = name
        self.mesh = mesh

    @property
    def signature(self):
        return signature(entry_function(self.module, self.name))

    def __str__(self) -> str:
        return str(self.module)

    def __repr__(self) -> str:
        return f"GradientProgram({self.name!r}, args={list(self.argument_names)}, results={list(self.result_names)})"


def _argument_name(program, w):
    """An argument by name, or (for a Program) by its Tensor."""
    if isinstance(w, str):
        return w
    block = getattr(program, "block", None)
    value = getattr(w, "value", None)
    if block is not None and value is not None:
        for name, arg in zip(program.argument_names, block.arguments):
            if arg == value:
                return name
    raise located_error(f"wrt must name arguments of the program (names or argument Tensors), got {checks.describe(w)}",
                        MeshIRTypeError)


def _gradient(program, wrt, result, function, cotangent, with_value) -> GradientProgram:
    source = checks.module_of(program, "the program to differentiate")
    result = checks.optional_name(result, "result")
    function = checks.optional_name(function, "function")
    cotangent = checks.flag(cotangent, "cotangent")
    if wrt is None:
        wrt = ()
    elif isinstance(wrt, str) or not isinstance(wrt, (list, tuple)):
        wrt = [wrt]
    wrt = tuple(_argument_name(program, w) for w in wrt)
    module, policy = precision.under_default(source, "the program to differentiate", wrt)
    if policy is None:
        with get_context():
            module = source.operation.clone()
    try:
        differentiated = function_name(entry_function(module, function))
        autodiff = AutodiffPass(function=function or "", wrt=wrt, result=result or "", cotangent=cotangent,
                                with_value=with_value)
        Pipeline([autodiff]).apply(module)
    except AutodiffError as e:
        if e.located:
            raise
        raise located_error(e.reason) from None
    except MeshIRError as e:
        raise located_error(str(e)) from None
    name = f"{differentiated}_grad"  # gradient_function's name for it
    _keep_only_entry(module, name, differentiated)
    # One flat function, as Program.call copies only the entry function (mi.train_step).
    Pipeline([InlineCallsPass()]).apply(module)
    if policy is not None:
        precision.widen_gradient_sums(module, policy)
    return GradientProgram(module, name, checks.program_mesh(program))


def _keep_only_entry(module, name: str, differentiated: str) -> None:
    """Make the gradient the module's one public function: the differentiated function goes
    (the gradient holds its own copy of the forward computation) unless something calls it;
    other functions become private."""
    called = set()
    for fn in functions(module):
        for op in fn.regions[0].blocks[0].operations if len(fn.regions[0].blocks) else ():
            if op.operation.name == "func.call":
                called.add(ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value)
    with get_context():
        for fn in functions(module):
            fname = function_name(fn)
            if fname == name:
                continue
            if fname == differentiated and fname not in called:
                fn.operation.erase()
            else:
                fn.attributes["sym_visibility"] = ir.StringAttr.get("private")


@reports_at_call_site
def grad(program, wrt=None, result: str | None = None, function: str | None = None,
         cotangent: bool = False) -> GradientProgram:
    """The gradient program of `program`'s scalar float result: its results are
    `grad_<a>` for each argument `a` in `wrt` (default: every float argument).

    `result` picks one of several results; `cotangent=True` adds an argument `cotangent`
    (the result's cotangent), which makes non-scalar results differentiable (a VJP).
    A function traced by `mi.jit` gives a function of the same arguments (eager/jit.py).
    """
    if _traced(program):
        return _traced_gradient(program, wrt, result, function, cotangent, with_value=False)
    return _gradient(program, wrt, result, function, cotangent, with_value=False)


@reports_at_call_site
def value_and_grad(program, wrt=None, result: str | None = None, function: str | None = None,
                   cotangent: bool = False) -> GradientProgram:
    """Like `grad`, with the differentiated result first (named `value`)."""
    if _traced(program):
        return _traced_gradient(program, wrt, result, function, cotangent, with_value=True)
    return _gradient(program, wrt, result, function, cotangent, with_value=True)


def _traced(program) -> bool:
    """An `mi.jit` function (eager/jit.py, a layer above): it has no program until it meets a
    signature, so it is differentiated by the gradient it makes of itself."""
    return hasattr(program, "traced_gradient")


def _traced_gradient(traced, wrt, result, function, cotangent, with_value):
    """The gradient of a traced function, as a function of its arguments."""
    if cotangent:
        raise located_error("cotangent=True is for programs; a traced function's gradient takes its own arguments "
                            "only (differentiate a scalar result)", MeshIRTypeError)
    return traced.traced_gradient(lambda program: _gradient(program, wrt, result, function, False, with_value))
