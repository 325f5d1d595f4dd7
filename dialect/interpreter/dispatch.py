"""Finding an op's rule: the "interpret" slot of the op registry (dialect/op_registry.py).

The rule convention: `rule(op, operands: list[np.ndarray])` returns one array when the op
has one result, and a list or tuple of exactly as many arrays as results otherwise (loops,
`mtf.split`; `rule_output` picks the form). The driver (evaluator.run_block) casts each to
its result type, and reports a wrong count or shape as an interpreter bug. The family files
register the rules; the op registry imports them when first asked (RULE_MODULES).
"""
from __future__ import annotations

import numpy as np

from .. import op_registry
from ..diagnostics import located_error


def rule_for(op):
    """The rule of an op, or a MeshIRError naming the op and its location."""
    rule = op_registry.lookup("interpret", op)
    if rule is None:
        raise located_error(op.location, f"the reference interpreter does not know operation '{op.operation.name}' "
                                         f"({op_registry.missing_rule('interpret', op)})")
    return rule


def rule_output(op, arrays: list[np.ndarray]):
    """`arrays`, one per result, in the rule convention: the array itself for a one-result op."""
    return arrays[0] if len(op.operation.results) == 1 else arrays
