"""`Dim`: a named dimension (name, size), the vocabulary of MeshIR programs."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .locations import located_error

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Dim:
    """A named dimension, e.g. `Dim("batch", 8)`. Two Dims are equal when name and size are."""

    name: str
    size: int

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise located_error(f"dimension name {self.name!r} is not an identifier")
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise located_error(f"dimension '{self.name}' has size {self.size!r}; sizes must be positive integers")

    def __repr__(self) -> str:
        return f"Dim({self.name!r}, {self.size})"

    def __str__(self) -> str:
        return f"{self.name}={self.size}"


def as_dims(dims, known: dict[str, int] | None = None, what: str = "dims") -> list[Dim]:
    """Dims from Dim objects, (name, size) pairs, or names whose size `known` gives."""
    if isinstance(dims, (Dim, str)):
        dims = [dims]
    out = []
    for d in dims:
        if isinstance(d, Dim):
            out.append(d)
        elif isinstance(d, str):
            if known is None or d not in known:
                have = ", ".join(f"{n}={s}" for n, s in (known or {}).items()) or "none"
                raise located_error(f"unknown dimension '{d}' in {what} (known here: {have})")
            out.append(Dim(d, known[d]))
        elif isinstance(d, tuple) and len(d) == 2:
            out.append(Dim(d[0], d[1]))
        else:
            raise located_error(f"{what} must be Dims, names or (name, size) pairs, got {d!r}")
    names = [d.name for d in out]
    for n in names:
        if names.count(n) > 1:
            raise located_error(f"dimension '{n}' appears twice in {what}")
    return out
