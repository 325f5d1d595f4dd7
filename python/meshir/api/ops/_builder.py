"""Create one `mtf` op in a Program: location, attributes, immediate verification."""
from __future__ import annotations

import functools

from meshir._jax_private import ir
from meshir.dialect import MeshIRError, MeshIRTypeError, MeshIRValueError, TensorType, VerifyError
from meshir.dialect.tensor_type import TypeContentError
from meshir.dialect.attributes import to_attribute
from meshir.dialect.diagnostics import format_location
from meshir.dialect.op_registry import rule

from meshir.api.programs._bodies import local_value
from meshir.api.programs._locations import call_site_location, located_error
from meshir.api.programs.program import program_of
from meshir.api.programs.tensor import Tensor


#: Runs an op function at once when it meets mi.Arrays outside a program: eager/dispatch.py
#: installs it (`run_eagerly`), being above this layer. Until then op functions build IR only.
_eager = None


def install_eager(run) -> None:
    """`run(fn, args, kwargs)` is called for every op function from now on (eager/dispatch.py)."""
    global _eager
    _eager = run


def dispatching(fn):
    """`fn` (an op function), running at once on `mi.Array`s outside a program."""

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if _eager is None:
            return fn(*args, **kwargs)
        return _eager(fn, args, kwargs)

    op.builder = fn  # the function that builds IR, for the op registry's completeness checks
    return op


def runtime_arguments(*names: str):
    """Decorator: these parameters (a seed) are values of the call, not of the signature: an
    eager call turns a Python int given for one into a 0-d int32 mi.Array, so each new seed
    runs the one compiled program instead of compiling another."""
    def mark(fn):
        fn.runtime_arguments = names
        return fn
    return mark


def builds(*op_classes):
    """Decorator: the function is the public `mi` builder of `op_classes` (the registry's
    "build" slot; the completeness test checks every op has one, or is INTERNAL). It also
    runs at once on `mi.Array`s outside a program (`dispatching`)."""

    def decorate(fn):
        return rule("build", *op_classes)(dispatching(fn))

    return decorate


def build(op_class, result_type: TensorType | None, operands=(), attributes=None, program=None,
          inference=None):
    """Insert `op_class` at the end of the program, verify it, return its result (a tuple of
    results for an op whose RESULTS is not 1: one per result type).

    `result_type` None: the op infers it (`infer_result_type`) from the operand types and
    attributes, plus `inference` (what only inference reads: a split's sizes). A verifier (or
    inference) failure erases the op and raises MeshIRError at the user's call site.
    """
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise located_error(f"'{op_class.OPERATION_NAME}': operand #{i} must be a MeshIR Tensor, got "
                                f"{type(t).__name__} {t!r}", MeshIRTypeError)
    prog = program_of(operands, program)
    prog._check_open()
    with prog.context:
        loc = call_site_location()
    with prog.context, loc:
        attrs = {k: to_attribute(v) for k, v in (attributes or {}).items() if v is not None}
        if result_type is None:
            try:
                result_type = op_class.infer_result_type([t.type for t in operands],
                                                         {**(attributes or {}), **(inference or {})})
            except VerifyError as e:
                raise MeshIRError(f"{format_location(loc)}: error: '{op_class.OPERATION_NAME}' op {e}") from None
            except TypeContentError as e:  # a size beyond the limits, say
                raise located_error(f"'{op_class.OPERATION_NAME}': {e}", MeshIRValueError) from None
        values = [local_value(prog, t.value) for t in operands]
        op = op_class(result_type, values, attrs, loc=loc, ip=ir.InsertionPoint(prog.block))
        try:
            op.verify(prog.mesh)
        except VerifyError as e:
            op.operation.erase()
            raise MeshIRError(f"{format_location(loc)}: error: '{op_class.OPERATION_NAME}' op {e}") from None
    if op_class.RESULTS == 1:
        return Tensor(prog, op.result)
    return tuple(Tensor(prog, r) for r in op.operation.results)


def result_type(op_name: str, dims, element_type: str) -> TensorType:
    """`TensorType.make(dims, element_type)` for an op's result; a located MeshIRValueError
    naming the op when the dims cannot form a type (a name twice, a size out of range)."""
    try:
        return TensorType.make(dims, element_type)
    except TypeContentError as e:
        raise located_error(f"'{op_name}': {e}", MeshIRValueError) from None
