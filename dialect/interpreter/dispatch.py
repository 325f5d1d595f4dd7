"""The dispatch table: operation name -> rule `(op, operand arrays) -> result array`."""
from __future__ import annotations

from . import collectives, contraction, creation, elementwise, indexing, shape
from ..diagnostics import located_error

RULES = {
    **elementwise.RULES,
    **contraction.RULES,
    **shape.RULES,
    **creation.RULES,
    **indexing.RULES,
    **collectives.RULES,
}


def rule_for(op):
    """The rule of an op, or a MeshIRError naming the op and its location."""
    name = op.operation.name
    if name not in RULES:
        raise located_error(op.location, f"the reference interpreter does not know operation '{name}'")
    return RULES[name]
