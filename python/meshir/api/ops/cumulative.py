"""cumsum and cumprod along a named dim."""
from __future__ import annotations

from meshir.dialect.ops import CumprodOp, CumsumOp

from meshir.api import _checks as checks
from meshir.api.ops._builder import build, builds
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["cumprod", "cumsum"]


def _cumulative(op_class, x: Tensor, dim, exclusive, reverse) -> Tensor:
    what = f"mi.{op_class.OPERATION_NAME.split('.')[1]}"
    checks.tensor(x, f"the operand of {what}")
    attrs = {"dim": checks.dim_name(dim, x, f"'{op_class.OPERATION_NAME}': dim"),
             "exclusive": checks.flag(exclusive, f"exclusive of {what}"),
             "reverse": checks.flag(reverse, f"reverse of {what}")}
    return build(op_class, None, [x], attrs)


@builds(CumsumOp)
def cumsum(x: Tensor, dim, exclusive: bool = False, reverse: bool = False) -> Tensor:
    """Running sums along `dim`, as `jax.lax.cumsum(x, axis, reverse)`; `exclusive` leaves each
    element out of its own position (the first holds 0). On a split dim only the blocks'
    totals cross the devices."""
    return _cumulative(CumsumOp, x, dim, exclusive, reverse)


@builds(CumprodOp)
def cumprod(x: Tensor, dim, exclusive: bool = False, reverse: bool = False) -> Tensor:
    """Running products along `dim`, as `jax.lax.cumprod(x, axis, reverse)`; `exclusive`: the
    first position holds 1."""
    return _cumulative(CumprodOp, x, dim, exclusive, reverse)
