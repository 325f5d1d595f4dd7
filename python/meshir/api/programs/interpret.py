"""`mi.interpret` and the IR checks from Python: their errors point at the caller's line."""
from __future__ import annotations

from meshir.api import _checks
from meshir.api.programs import precision
from meshir.dialect import check_module as _check_module
from meshir.dialect import verify_module as _verify_module
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.interpreter import interpret as _interpret

# An error without an IR location points at the caller.
check_module = reports_at_call_site(_check_module)
verify_module = reports_at_call_site(_verify_module)


@reports_at_call_site
def interpret(program_or_module, *args, function: str | None = None, **inputs):
    """Run a program with the NumPy reference interpreter (global semantics).

    Inputs are NumPy arrays (or anything np.asarray accepts) by argument name or position;
    returns one array for one result, a tuple for several.
    """
    module = _checks.module_of(program_or_module, "the program of mi.interpret")
    function = _checks.optional_name(function, "function")
    if function is None:  # a program built with a mixed-precision policy computes under it
        module, _ = precision.under_default(module, "the program of mi.interpret")
    return _interpret(module, *args, function=function, **inputs)
