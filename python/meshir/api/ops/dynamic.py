"""dynamic_slice and dynamic_update_slice along a named dim at a runtime start."""
from __future__ import annotations

from meshir.dialect.diagnostics import MeshIRValueError
from meshir.dialect.ops import DynamicSliceOp, DynamicUpdateSliceOp
from meshir.dialect.tensor_type import Dimension

from meshir.api import _checks as checks
from meshir.api.ops import creation
from meshir.api.ops._builder import build, builds, located_error
from meshir.api.programs.tensor import Tensor

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["dynamic_slice", "dynamic_update_slice"]


def _start(start, x: Tensor, what: str) -> Tensor:
    """A 0-d i32 Tensor from a Tensor or a Python int."""
    if isinstance(start, Tensor):
        return creation.int32_scalar(start, f"the start of {what}")
    return creation.constant(checks.integer(start, f"the start of {what}"), (), "i32", program=x.program)


@builds(DynamicSliceOp)
def dynamic_slice(x: Tensor, dim, start, size: int) -> Tensor:
    """The window of `size` along `dim` at `start` (a 0-d int32 Tensor or an int), read as
    `jax.lax.dynamic_slice` reads it (a negative start counts from the end, then the start is
    clamped into [0, size of dim − size]); it keeps `dim`'s name with the window's size. Along
    a split dim only the devices holding the window do the work."""
    checks.tensor(x, "the operand of mi.dynamic_slice")
    name = checks.dim_name(dim, x, "'mtf.dynamic_slice': dim")
    size = checks.integer(size, "the size of mi.dynamic_slice")
    if not 1 <= size <= x.type.size(name):
        raise located_error(f"'mtf.dynamic_slice': size {size} is not in [1, {x.type.size(name)}], the size of "
                            f"'{name}' in {x.type}", MeshIRValueError)
    start = _start(start, x, "mi.dynamic_slice")
    result = x.type.without_layout().with_dims(Dimension(d.name, size if d.name == name else d.size) for d in x.type.dims)
    return build(DynamicSliceOp, result, [x, start], {"dim": name})


@builds(DynamicUpdateSliceOp)
def dynamic_update_slice(x: Tensor, dim, start, update: Tensor) -> Tensor:
    """`x` with `update` written along `dim` at `start` (read as `jax.lax.dynamic_update_slice`
    reads it); `update` has `x`'s dims, with `dim` of the window's size. Along a split dim each
    device writes the part of the window in its block (a decoding cache updated in place)."""
    checks.tensor(x, "the operand of mi.dynamic_update_slice")
    checks.tensor(update, "the update of mi.dynamic_update_slice")
    name = checks.dim_name(dim, x, "'mtf.dynamic_update_slice': dim")
    return build(DynamicUpdateSliceOp, None, [x, update, _start(start, x, "mi.dynamic_update_slice")], {"dim": name})
