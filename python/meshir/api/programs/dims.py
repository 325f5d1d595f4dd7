"""`Dim`: a named dimension (name, size), the vocabulary of MeshIR programs."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.mesh import valid_name

from meshir.api.programs._locations import located_error


@dataclass(frozen=True)
class Dim:
    """A named dimension, e.g. `Dim("batch", 8)`. Two Dims are equal when name and size are."""

    name: str
    size: int

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise located_error(f"dimension name must be a str, got {type(self.name).__name__} {self.name!r}",
                                MeshIRTypeError)
        if not valid_name(self.name):
            raise located_error(f"dimension name {self.name!r} is not an identifier", MeshIRValueError)
        if isinstance(self.size, (bool, np.bool_)) or not isinstance(self.size, (int, np.integer)):
            raise located_error(f"dimension '{self.name}' has size {self.size!r} ({type(self.size).__name__}); "
                                "sizes must be positive integers", MeshIRTypeError)
        if not 1 <= self.size < 2**63:
            raise located_error(f"dimension '{self.name}' has size {self.size!r}; sizes must be positive integers "
                                "that fit in 64 bits", MeshIRValueError)
        object.__setattr__(self, "size", int(self.size))  # NumPy integers (from .shape) become ints

    def __repr__(self) -> str:
        return f"Dim({self.name!r}, {self.size})"

    def __str__(self) -> str:
        return f"{self.name}={self.size}"


def as_dims(dims, known: dict[str, int] | None = None, what: str = "dims") -> list[Dim]:
    """Dims from Dim objects, (name, size) pairs, or names whose size `known` gives."""
    if isinstance(dims, (Dim, str)):
        dims = [dims]
    elif isinstance(dims, (bytes, dict)) or not hasattr(dims, "__iter__"):
        raise located_error(f"{what} must be a list of Dims, names or (name, size) pairs, got "
                            f"{type(dims).__name__} {dims!r}", MeshIRTypeError)
    out = []
    for d in dims:
        if isinstance(d, Dim):
            out.append(d)
        elif isinstance(d, str):
            if known is None or d not in known:
                have = ", ".join(f"{n}={s}" for n, s in (known or {}).items()) or "none"
                raise located_error(f"unknown dimension '{d}' in {what} (known here: {have})", MeshIRValueError)
            out.append(Dim(d, known[d]))
        elif isinstance(d, tuple) and len(d) == 2:
            out.append(Dim(d[0], d[1]))
        else:
            raise located_error(f"{what} must be Dims, names or (name, size) pairs, got {type(d).__name__} {d!r}",
                                MeshIRTypeError)
    names = [d.name for d in out]
    for n in names:
        if names.count(n) > 1:
            raise located_error(f"dimension '{n}' appears twice in {what}", MeshIRValueError)
    return out
