"""The calls between a module's functions, for what follows them: callees before callers,
and the cycles of calls that would make it follow them forever.

Inlining, propagation, autodiff and the interpreter each go from a call into its callee, so
a recursive call sent them round without end (a RecursionError, or a hang), and Shardy's
propagation pipeline segfaulted on one. MeshIR does not support recursion: each refuses it
with an error at the call that closes the cycle, naming the cycle. The walks use explicit
stacks: call chains may be longer than Python's recursion limit.
"""
from __future__ import annotations

from meshir._jax_private import ir

from .diagnostics import MeshIRError, located_error
from .signature import defined_functions, function_name
from .walk import ops_within


def calls_in(fn) -> list[tuple[object, str]]:
    """(func.call op, callee name) for every call in `fn`, loop bodies included, in order."""
    return [(op, ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value)
            for op in ops_within(fn.regions[0].blocks[0]) if op.operation.name == "func.call"]


def recursive_call(module, roots=None) -> tuple[object, list[str]] | None:
    """The first call that closes a cycle among the defined functions reached from `roots`
    (function names; default: every function), with the cycle's names (`[f, g, f]`); None
    when no function reached calls itself."""
    return _depth_first(module, roots)[1]


def callees_first(module, consequence: str = "MeshIR does not support recursive calls") -> list:
    """Defined functions, every callee before its callers; on a recursive call, a MeshIRError
    at that call: the cycle, then `consequence` (what cannot be done, e.g. by which pass)."""
    order, cycle = _depth_first(module, None)
    if cycle is not None:
        raise recursion_error(*cycle, consequence)
    return order


def recursion_error(call, cycle: list[str], consequence: str) -> MeshIRError:
    """`recursion_message`, located at `call`."""
    return located_error(call.location, recursion_message(cycle, consequence))


def recursion_message(cycle: list[str], consequence: str) -> str:
    """`'func.call' op @f calls itself (@f -> @f): <consequence>`, or for a longer cycle
    `@g calls @f, which leads back to @g (@f -> @g -> @f)`."""
    path = " -> ".join("@" + name for name in cycle)
    caller, callee = cycle[-2], cycle[-1]
    what = (f"@{callee} calls itself" if len(cycle) == 2
            else f"@{caller} calls @{callee}, which leads back to @{caller}")
    return f"'func.call' op {what} ({path}): {consequence}"


def _depth_first(module, roots) -> tuple[list, tuple[object, list[str]] | None]:
    """(functions reached, callees first; the first cycle found as (call, names), or None)."""
    fns = {function_name(fn): fn for fn in defined_functions(module)}
    order, done = [], set()
    for root in fns if roots is None else [r for r in roots if r in fns]:
        if root in done:
            continue
        chain, stack = [root], [iter(calls_in(fns[root]))]
        while stack:
            call, callee = next(stack[-1], (None, None))
            if call is None:
                stack.pop()
                done.add(chain[-1])
                order.append(fns[chain.pop()])
            elif callee in chain:
                return order, (call, chain[chain.index(callee):] + [callee])
            elif callee in fns and callee not in done:
                chain.append(callee)
                stack.append(iter(calls_in(fns[callee])))
    return order, None
