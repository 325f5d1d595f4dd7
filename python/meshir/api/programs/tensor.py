"""`Tensor`: a value of a Program, with named dims and arithmetic operators."""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect import TensorType
from meshir.dialect.diagnostics import MeshIRTypeError

from meshir.api.programs.named_value import NamedValue
from meshir.api.programs._locations import located_error


class Tensor(NamedValue):
    """An SSA value of a Program. Operators build `mtf` ops; names broadcast.

    The type is read once, when the Tensor is made: shape, dims and repr never touch MLIR
    again, so they stay valid after the program finished. The MLIR value itself (`.value`)
    of a call result dies when the call is inlined at the program's end; asking for it then
    is a MeshIRError, never a read of freed memory.
    """

    __slots__ = ("program", "_value", "type", "_name", "_from_call")
    __array_priority__ = 1000  # NumPy scalars on the left defer to our reflected operators

    def __init__(self, program, value: ir.Value, from_call: bool = False):
        self.program = program
        self._value = value
        self.type: TensorType = TensorType.from_mlir(value.type)
        self._name: str | None = None
        self._from_call = from_call

    @property
    def value(self) -> ir.Value:
        """The MLIR value (a MeshIRError once the call that made it was inlined)."""
        if self._from_call and self.program.calls_inlined:
            raise located_error(
                f"{self!r} is the result of a call of program '{self.program.name}' that was inlined when the "
                "program finished; use it inside the `with Program(...)` block")
        return self._value

    def __repr__(self) -> str:
        if self._name is None and not (self._from_call and self.program.calls_inlined):
            self._name = self._value.get_name()
        return f"Tensor({self._name or 'inlined call result'}: {self.type})"

    __hash__ = object.__hash__

    def __bool__(self):
        raise located_error(f"{self!r} has no truth value while the program is being built: Python control flow "
                            "cannot depend on it (use mi.where or mi.select for a choice made on the devices, "
                            "mi.scan or mi.while_loop for a loop)", MeshIRTypeError)

    # Python protocols a symbolic value cannot serve: a MeshIRTypeError saying what to use.
    def __iter__(self):
        raise located_error(f"{self!r} is not iterable: its values exist only when the program runs", MeshIRTypeError)

    def __len__(self):
        raise located_error(f"{self!r} has no len(); use .shape or .dim(name).size", MeshIRTypeError)

    def __getitem__(self, index):
        raise located_error(f"{self!r} cannot be indexed with {index!r}; use mi.slice(x, dim, start, length) "
                            "or mi.gather", MeshIRTypeError)

    def __matmul__(self, other):
        raise located_error(f"{self!r} @ {other!r}: MeshIR contracts by name; use mi.einsum(x, w) (sums the "
                            "names both have) or mi.einsum(x, w, output=dims)",
                            MeshIRTypeError)

    __rmatmul__ = __matmul__

    def __float__(self):
        raise located_error(f"{self!r} has no Python value while the program is being built: its value exists only "
                            "when the program runs. Compute with it in mi ops (mi.where or mi.select for a choice, "
                            "mi.cast for another element type), or return it as a result of the program (inside "
                            "mi.jit: of the function) and call float() on that", MeshIRTypeError)

    __int__ = __index__ = __complex__ = __float__

    def __array__(self, *args, **kwargs):
        raise located_error(f"{self!r} is symbolic and cannot become a NumPy array; run the program "
                            "(mi.interpret or mi.compile) to get arrays", MeshIRTypeError)

