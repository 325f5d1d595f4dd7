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
        return _elementwise.add(self, other)

    def __radd__(self, other):
        return _elementwise.add(other, self)

    def __sub__(self, other):
        return _elementwise.sub(self, other)

    def __rsub__(self, other):
        return _elementwise.sub(other, self)

    def __mul__(self, other):
        return _elementwise.mul(self, other)

    def __rmul__(self, other):
        return _elementwise.mul(other, self)

    def __truediv__(self, other):
        return _elementwise.div(self, other)

    def __rtruediv__(self, other):
        return _elementwise.div(other, self)

    def __pow__(self, other):
        return _elementwise.pow(self, other)

    def __rpow__(self, other):
        return _elementwise.pow(other, self)

    def __neg__(self):
        return _elementwise.neg(self)

    def __abs__(self):
        return _elementwise.abs(self)

    def __lt__(self, other):
        return _elementwise.less(self, other)

    def __le__(self, other):
        return _elementwise.less_equal(self, other)

    def __gt__(self, other):
        return _elementwise.greater(self, other)

    def __ge__(self, other):
        return _elementwise.greater_equal(self, other)

    def __eq__(self, other):  # elementwise, like NumPy and JAX arrays
        return _elementwise.equal(self, other)

    def __ne__(self, other):
        return _elementwise.not_equal(self, other)

    __hash__ = object.__hash__  # __eq__ is elementwise; identity hashes, as NumPy's arrays do not


def install_operators(elementwise) -> None:
    """The module whose functions the operators call (ops/elementwise.py, a layer above:
    meshir/_namespace.py installs it)."""
    global _elementwise
    _elementwise = elementwise


_elementwise = None
