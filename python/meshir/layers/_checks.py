"""The checks every layer makes on what it is given: named tensors with the dims it
documents, parameters under the names it documents. Each failure is a MeshIRValueError at
the user's line that names the layer, the value and what was expected."""
from __future__ import annotations

from collections.abc import Mapping

from meshir.dialect import MeshIRTypeError, MeshIRValueError

from meshir.api.programs._locations import located_error
from meshir.api.programs.tensor import Tensor


def error(message: str, cls: type = MeshIRValueError):
    """A MeshIRValueError (or `cls`) at the user's line."""
    return located_error(message, cls)


def tensor(x, layer: str, what: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise located_error(f"{layer}: {what} must be a named Tensor, got {type(x).__name__}", MeshIRTypeError)
    return x


def has_dims(x: Tensor, names, layer: str, what: str) -> None:
    """`x` has every dim in `names` (the layer documents them)."""
    missing = [n for n in names if n not in x.names]
    if missing:
        raise located_error(f"{layer}: {what} {x.type} has no dim {', '.join(repr(n) for n in missing)} "
                            f"(it needs {', '.join(repr(n) for n in names)})", MeshIRValueError)


def exact_dims(x: Tensor, names, layer: str, what: str) -> None:
    """`x` has exactly the dims `names`, in any order."""
    if sorted(x.names) != sorted(names):
        raise located_error(f"{layer}: {what} {x.type} must have exactly the dims "
                            f"{', '.join(repr(n) for n in names)}", MeshIRValueError)


def param_dims(t: Tensor, names, x: Tensor, layer: str, what: str) -> None:
    """Parameter `t` has the dims `names`, and any others only if the input `x` has them too
    (at the same size): dims a layer carries through like a batch dim, such as the `stage`
    of a pipeline, whose every stage has its own parameters."""
    missing = [n for n in names if n not in t.names]
    foreign = [n for n in t.names if n not in names and n not in x.names]
    if missing or foreign:
        raise located_error(f"{layer}: {what} {t.type} must have the dims {', '.join(repr(n) for n in names)} "
                            f"(and others only if the input {x.type} has them too)", MeshIRValueError)
    for n in t.names:
        if n not in names:
            same_size(t, x, n, layer, what, "the input")


def size_of(dims, name: str) -> int:
    """The size of the dim `name` among `dims` (Dims)."""
    return next(d.size for d in dims if d.name == name)


def size(x: Tensor, name: str) -> int:
    return x.shape[x.names.index(name)]


def params(p, names, layer: str, optional=()) -> dict[str, Tensor]:
    """The parameters `names` (and those of `optional` present) out of the mapping `p`,
    each a Tensor."""
    if not isinstance(p, Mapping):
        raise located_error(f"{layer}: the parameters must be a mapping of name to Tensor "
                            f"({', '.join(names)}), got {type(p).__name__}", MeshIRTypeError)
    missing = [n for n in names if n not in p]
    if missing:
        raise located_error(f"{layer}: no parameter {', '.join(repr(n) for n in missing)} among "
                            f"{', '.join(repr(n) for n in p) or 'none'}", MeshIRValueError)
    out = {n: tensor(p[n], layer, f"parameter '{n}'") for n in names}
    out.update({n: tensor(p[n], layer, f"parameter '{n}'") for n in optional if p.get(n) is not None})
    return out


def same_size(a: Tensor, b: Tensor, name: str, layer: str, what_a: str, what_b: str) -> None:
    if size(a, name) != size(b, name):
        raise located_error(f"{layer}: dim '{name}' is {size(a, name)} in {what_a} {a.type} but {size(b, name)} in "
                            f"{what_b} {b.type}", MeshIRValueError)
