"""meshir.dialect.interpreter: a NumPy reference interpreter of the global semantics of `mtf`.

It is the oracle of the tests and a debugging tool: a program means what it computes on one
device, so layouts and `partial` are ignored and every collective is the identity.
"""
# The family files' "interpret" rules are loaded by the op registry when first asked for.
from .evaluator import interpret, run_function  # noqa: F401
