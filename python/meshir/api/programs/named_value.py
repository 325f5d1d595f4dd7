"""What named arrays share: `Tensor` (building a program) and `mi.Array` (running now) read
their dims from their `type`, and their operators are the elementwise op functions."""
from __future__ import annotations

from meshir.dialect.diagnostics import MeshIRKeyError

from meshir.api.programs._locations import located_error
from meshir.api.programs.dims import Dim


class NamedValue:
    """Dims from `self.type` (a TensorType), and operators as the `mi` elementwise
    functions, broadcasting by dim name: on Tensors they build ops, on mi.Arrays they run at
    once (the functions dispatch on their arguments)."""

    __slots__ = ()

    @property
    def dims(self) -> list[Dim]:
        return [Dim(d.name, d.size) for d in self.type.dims]

    @property
    def names(self) -> tuple[str, ...]:
        return self.type.names

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> str:
        """The element type name (f32, bf16, ..., i1)."""
        return self.type.element_type

    def dim(self, name: str) -> Dim:
        """The Dim called `name` (KeyError naming the dims there are)."""
        for d in self.dims:
            if d.name == name:
                return d
        raise located_error(f"no dimension {name!r} in {self.type} (dims: {', '.join(self.names) or 'none'})",
                            MeshIRKeyError)

    # Arithmetic and comparisons, elementwise with broadcasting by name.
    def __add__(self, other):
        return _ew().add(self, other)

    def __radd__(self, other):
        return _ew().add(other, self)

    def __sub__(self, other):
        return _ew().sub(self, other)

    def __rsub__(self, other):
        return _ew().sub(other, self)

    def __mul__(self, other):
        return _ew().mul(self, other)

    def __rmul__(self, other):
        return _ew().mul(other, self)

    def __truediv__(self, other):
        return _ew().div(self, other)

    def __rtruediv__(self, other):
        return _ew().div(other, self)

    def __pow__(self, other):
        return _ew().pow(self, other)

    def __rpow__(self, other):
        return _ew().pow(other, self)

    def __neg__(self):
        return _ew().neg(self)

    def __abs__(self):
        return _ew().abs(self)

    def __lt__(self, other):
        return _ew().less(self, other)

    def __le__(self, other):
        return _ew().less_equal(self, other)

    def __gt__(self, other):
        return _ew().greater(self, other)

    def __ge__(self, other):
        return _ew().greater_equal(self, other)

    def __eq__(self, other):  # elementwise, like NumPy and JAX arrays
        return _ew().equal(self, other)

    def __ne__(self, other):
        return _ew().not_equal(self, other)

    __hash__ = object.__hash__  # __eq__ is elementwise; identity hashes, as NumPy's arrays do not


def _ew():
    from meshir.api.ops import elementwise

    return elementwise
