"""Meshes: named processor axes, read from (and written as) Shardy's `sdy.mesh`."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from meshir._jax_private import func, ir, sdy

from .diagnostics import MeshIRError

_AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Mesh:
    """A mesh of processors with named axes, major to minor: `Mesh({"x": 4, "y": 2})`."""

    axes: tuple[tuple[str, int], ...]
    name: str = "mesh"

    def __init__(self, axes, name: str = "mesh"):
        items = tuple(axes.items()) if isinstance(axes, dict) else tuple(axes)
        for axis, size in items:
            if not isinstance(axis, str) or not _AXIS_NAME.match(axis):
                raise MeshIRError(f"mesh axis name {axis!r} is not an identifier")
            if not isinstance(size, int) or size < 1:
                raise MeshIRError(f"mesh axis '{axis}' has size {size!r}; sizes must be positive integers")
        names = [a for a, _ in items]
        if len(set(names)) != len(names):
            raise MeshIRError(f"mesh axis names repeat: {names}")
        object.__setattr__(self, "axes", items)
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
    """The Mesh of an `sdy.mesh` op."""
    attr = sdy.MeshAttr(op.attributes["mesh"])
    name = ir.StringAttr(op.attributes["sym_name"]).value
    return Mesh([(sdy.MeshAxisAttr(a).name, sdy.MeshAxisAttr(a).size) for a in attr.axes], name)


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
