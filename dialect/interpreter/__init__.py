"""meshir.dialect.interpreter: a NumPy reference interpreter of the global semantics of `mtf`.

It is the oracle of the tests and a debugging tool: a program means what it computes on one
device, so layouts and `partial` are ignored and every collective is the identity.
"""
# The family files register the "interpret" rules; import them all so every op has its rule.
from . import collectives, contraction, creation, cumulative, dynamic, elementwise, indexing, loops, selection, shape  # noqa: F401
from .evaluator import interpret, run_function  # noqa: F401
