"""The driver: evaluate a `func.func` of `mtf` ops on NumPy arrays, op by op.

Each op runs its "interpret" rule (dispatch.py states the rule convention); the driver
itself handles what has no rule: func.return and func.call, and `mtf.yield`, which ends a
loop's body and returns its operands to the loop's rule (loops.py).
"""
from __future__ import annotations

import numpy as np

from meshir._jax_private import ir

from ..call_graph import recursion_error, recursive_call
from ..diagnostics import VerifyError, located_error
from ..ops.base import tensor_type_of
from ..ops.loops import YieldOp
from ..signature import entry_function, function_name, functions, signature
from ..verifier import check_module
from .dispatch import rule_for
from .inputs import bind_arguments, check_inputs


def run_function(fn, inputs) -> list[np.ndarray]:
    """Evaluate `fn` (a func.func OpView) on `inputs`, one array per argument, in order.

    Inputs are checked and converted to the argument types; one array per result is returned,
    each with its result type's global shape and dtype. Layouts and `partial` are ignored.
    Results are fresh arrays: they never alias an input or each other.
    """
    cycle = recursive_call(fn.operation.parent, [function_name(fn)])
    if cycle is not None:  # MeshIR does not support recursion
        raise recursion_error(*cycle, "the interpreter does not run recursive calls (MeshIR does not support them)")
    sig = signature(fn)
    arrays = check_inputs(sig, inputs)
    with np.errstate(all="ignore"):  # IEEE results (log(0) = -inf, ...) are the semantics
        return [np.array(r, copy=True) for r in _run(fn, arrays)]


def interpret(module, *args, function: str | None = None, **kwargs):
    """Run a module's entry function (or `function`) on arguments given by position or name.

    `module` is a builtin.module op, an ir.Module, or any object with a `.module` of those
    (a Program). The module is verified first. Returns one array for a single result, else a
    named tuple of arrays (by result name; positional use as a tuple).
    """
    module = getattr(module, "module", module)
    check_module(module)
    fn = entry_function(module, function)
    sig = signature(fn)
    return sig.results(run_function(fn, bind_arguments(sig, args, kwargs)))


def _run(fn, arrays: list[np.ndarray]) -> list[np.ndarray]:
    returned = run_block(fn.regions[0].blocks[0], arrays)
    if returned is None:
        raise located_error(fn.location, f"function @{function_name(fn)} has no func.return")
    return returned


def run_block(block, arrays: list[np.ndarray]) -> list[np.ndarray] | None:
    """Evaluate a block's ops on its arguments; what its func.return or mtf.yield returns."""
    values: dict[ir.Value, np.ndarray] = dict(zip(block.arguments, arrays))
    for op in block.operations:
        operands = [values[v] for v in op.operation.operands]
        if isinstance(op, YieldOp) or op.operation.name == "func.return":
            return operands
        if op.operation.name == "func.call":
            results = _call(op, operands)
        else:
            results = _one_per_result(rule_for(op)(op, operands), op)
        for value, array in zip(op.operation.results, results):
            values[value] = _as_result(array, value, op)
    return None


def _call(op, operands):
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    module = op.operation.parent.parent
    for fn in functions(module):
        if function_name(fn) == callee:
            return _run(fn, operands)
    raise located_error(op.location, f"call to unknown function @{callee}")


def _one_per_result(output, op) -> list:
    """A rule's output as one array per result: it returns one array for a one-result op,
    else a sequence of exactly as many arrays as the op has results."""
    count = len(op.operation.results)
    if count == 1:
        return [output]
    got = len(output) if isinstance(output, (list, tuple)) else None
    if got != count:
        what = "one array, not a sequence," if got is None else f"a sequence of {got}"
        raise located_error(op.location, f"interpreter bug: '{op.operation.name}' produced {what} for {count} results")
    return output


def _as_result(array, value, op) -> np.ndarray:
    """The rule's output in the value's dtype; an internal shape mismatch is reported, not hidden."""
    try:
        t = tensor_type_of(value, "result")
    except VerifyError as e:
        raise located_error(op.location, f"'{op.operation.name}' op {e}") from None
    array = np.asarray(array)
    if array.shape != t.shape:
        raise located_error(
            op.location, f"interpreter bug: '{op.operation.name}' produced shape {array.shape} for {t}"
        )
    return array.astype(t.dtype, order="C", copy=not array.flags.c_contiguous)
