"""Meshes: named processor axes, read from (and written as) Shardy's `sdy.mesh`."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from meshir._jax_private import func, ir, sdy

from .call_site import reports_at_call_site
from .diagnostics import MeshIRError, MeshIRTypeError, MeshIRValueError, located_error

_AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AXIS_TEXT = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([0-9]+)\s*$")


def valid_name(name) -> bool:
    """True for identifiers ([A-Za-z_][A-Za-z0-9_]*): mesh, axis and dimension names."""
    return isinstance(name, str) and bool(_AXIS_NAME.fullmatch(name))  # fullmatch: "x\n" is no name


def _axis_items(axes) -> tuple:
    """(axis, size) pairs from a dict, a sequence of pairs, or text like "x=4, y=2"."""
    if isinstance(axes, dict):
        return tuple(axes.items())
    if isinstance(axes, str):
        items = []
        for part in axes.split(",") if axes.strip() else []:
            match = _AXIS_TEXT.match(part)
            if not match:
                raise MeshIRValueError(f"malformed mesh {axes!r}: {part.strip()!r} is not axis=size (e.g. \"x=4, y=2\")")
            items.append((match.group(1), int(match.group(2))))
        return tuple(items)
    if isinstance(axes, (list, tuple)):
        for item in axes:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise MeshIRValueError(f"mesh axes must be (axis, size) pairs, got {item!r} in {axes!r}")
        return tuple(tuple(item) for item in axes)
    raise MeshIRTypeError(f"mesh axes must be a dict {{axis: size}}, (axis, size) pairs or text like \"x=4, y=2\", "
                          f"got {type(axes).__name__} {axes!r}")


def _mesh_problem(items: tuple, name) -> MeshIRValueError | None:
    """What makes (axis, size) `items` named `name` no mesh, unlocated (None: a mesh)."""
    for axis, size in items:
        if not valid_name(axis):
            return MeshIRValueError(f"mesh axis name {axis!r} is not an identifier")
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) or size < 1:
            return MeshIRValueError(f"mesh axis '{axis}' has size {size!r}; sizes must be positive integers")
    if math.prod(int(s) for _, s in items) >= 2**63:
        return MeshIRValueError(f"mesh {dict(items)} has more devices than int64 can count")
    names = [a for a, _ in items]
    if len(set(names)) != len(names):
        return MeshIRValueError(f"mesh axis names repeat: {names}")
    if not valid_name(name):
        return MeshIRValueError(f"mesh name {name!r} is not an identifier")
    return None


@dataclass(frozen=True)
class Mesh:
    """A mesh of processors with named axes, major to minor: `Mesh({"x": 4, "y": 2})`, also
    `Mesh([("x", 4), ("y", 2)])` or `Mesh("x=4, y=2")`."""

    axes: tuple[tuple[str, int], ...]
    name: str = "mesh"

    @reports_at_call_site
    def __init__(self, axes, name: str = "mesh"):
        items = _axis_items(axes)
        problem = _mesh_problem(items, name)
        if problem is not None:
            raise problem
        object.__setattr__(self, "axes", tuple((a, int(s)) for a, s in items))
        object.__setattr__(self, "name", name)

    @property
    def shape(self) -> dict[str, int]:
        """`{axis: size}` in major-to-minor order."""
        return dict(self.axes)

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a for a, _ in self.axes)

    @property
    def size(self) -> int:
        """Number of devices."""
        return math.prod(s for _, s in self.axes)

    def axis_size(self, axis: str) -> int:
        if axis not in self.shape:
            raise MeshIRError(f"unknown mesh axis '{axis}' (mesh @{self.name} has {self.format_axes()})")
        return self.shape[axis]

    def format_axes(self) -> str:
        return "[" + ", ".join(f'"{a}"={s}' for a, s in self.axes) + "]"

    def to_mlir_text(self) -> str:
        """The `sdy.mesh` op that declares this mesh."""
        return f"sdy.mesh @{self.name} = <{self.format_axes()}>"

    def __str__(self) -> str:
        return f"@{self.name} = <{self.format_axes()}>"


def declare_mesh(mesh: Mesh, ip=None):
    """Insert the `sdy.mesh` op that declares `mesh` (at `ip`, or the current insertion point)."""
    return sdy.MeshOp(mesh.name, ir.Attribute.parse(f"#sdy.mesh<{mesh.format_axes()}>"), ip=ip)


def mesh_from_op(op) -> Mesh:
    """The Mesh of an `sdy.mesh` op. One MeshIR cannot use is an error located at the op
    (checked before `Mesh(...)`, whose errors would name the Python caller's line instead)."""
    attr = sdy.MeshAttr(op.attributes["mesh"])
    name = ir.StringAttr(op.attributes["sym_name"]).value
    items = tuple((sdy.MeshAxisAttr(a).name, sdy.MeshAxisAttr(a).size) for a in attr.axes)
    problem = _mesh_problem(items, name)
    if problem is not None:
        raise located_error(op.location, f"'sdy.mesh' op {problem}")
    return Mesh(items, name)


def module_meshes(module_op) -> dict[str, Mesh]:
    """Every `sdy.mesh` at the top of a module, by symbol name."""
    return {
        m.name: m
        for m in (mesh_from_op(op) for op in module_op.regions[0].blocks[0].operations if op.name == "sdy.mesh")
    }


def function_mesh(fn: func.FuncOp, meshes: dict[str, Mesh]) -> Mesh | None:
    """The mesh a function runs on: its `mtf.mesh` attribute, or the module's only mesh.

    Raises MeshIRError when the attribute names a mesh that does not exist.
    """
    attrs = fn.attributes
    if "mtf.mesh" in attrs:
        try:
            ref = ir.FlatSymbolRefAttr(attrs["mtf.mesh"]).value
        except ValueError:
            raise MeshIRError(f"mtf.mesh must name a mesh symbol like @mesh, got {attrs['mtf.mesh']}") from None
        if ref not in meshes:
            known = ", ".join("@" + n for n in meshes) or "none"
            raise MeshIRError(f"function refers to unknown mesh @{ref} (meshes in module: {known})")
        return meshes[ref]
    if len(meshes) == 1:
        return next(iter(meshes.values()))
    return None
