"""Meshes: named processor axes, read from (and written as) Shardy's `sdy.mesh`.

A Mesh may also carry the devices it runs on (`devices=`, or a `jax.sharding.Mesh`'s): a
runtime fact, kept out of the IR, of equality and of hashing (docs/decisions.md, "Meshes and
their devices").
"""
from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from meshir._jax_private import func, ir, sdy
from .attribute_names import MESH

from .call_site import reports_at_call_site
from .diagnostics import MeshIRError, MeshIRTypeError, MeshIRValueError, located_error

_AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def valid_name(name) -> bool:
    """True for identifiers ([A-Za-z_][A-Za-z0-9_]*): mesh, axis and dimension names."""
    return isinstance(name, str) and bool(_AXIS_NAME.fullmatch(name))  # fullmatch: "x\n" is no name


def _axis_items(axes) -> tuple:
    """(axis, size) pairs from a dict, a sequence of pairs, or text like "x=4, y=2" or "x:4;y:2"."""
    if isinstance(axes, dict):
        return tuple(axes.items())
    if isinstance(axes, str):
        return _parse_axes_text(axes)
    if isinstance(axes, (list, tuple)):
        for item in axes:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise MeshIRValueError(f"mesh axes must be (axis, size) pairs, got {item!r} in {axes!r}")
        return tuple(tuple(item) for item in axes)
    raise MeshIRTypeError(f"mesh axes must be a dict {{axis: size}}, (axis, size) pairs, text like \"x=4, y=2\" "
                          f"or a jax.sharding.Mesh, got {type(axes).__name__} {axes!r}")


_TEXT_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)")
_TEXT_MARK = re.compile(r"\s*[=:]")
_TEXT_SIZE = re.compile(r"\s*([0-9]+)")
_TEXT_SEPARATOR = re.compile(r"\s*([,;])")
_TEXT_END = re.compile(r"\s*$")


def _parse_axes_text(text: str) -> tuple:
    """The (axis, size) pairs of a mesh text: `name=size` or `name:size` items separated by
    commas or semicolons ("x=4, y=2"; Mesh-TensorFlow's mesh_shape "x:4;y:2"); "" has none.
    A syntax error is a MeshIRValueError naming the text and the column, with a caret."""
    items, pos = [], 0
    if _TEXT_END.match(text):
        return ()
    while True:
        name = _TEXT_NAME.match(text, pos)
        if not name:
            after = f" after {text[pos - 1]!r}" if pos else ""
            raise _text_error(text, pos, f"expected an axis name{after}")
        mark = _TEXT_MARK.match(text, name.end())
        if not mark:
            raise _text_error(text, name.end(), f"expected '=' or ':' after axis name {name.group(1)!r}")
        size = _TEXT_SIZE.match(text, mark.end())
        if not size:
            raise _text_error(text, mark.end(), f"expected the size of axis {name.group(1)!r} (a positive integer)")
        items.append((name.group(1), int(size.group(1))))
        if _TEXT_END.match(text, size.end()):
            return tuple(items)
        separator = _TEXT_SEPARATOR.match(text, size.end())
        if not separator:
            raise _text_error(text, size.end(), "expected ',' or ';' between axes")
        pos = separator.end()


def _text_error(text: str, pos: int, what: str) -> MeshIRValueError:
    """A mesh text's syntax error at index `pos` (past blanks): its column and a caret line."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    shown = "".join(" " if c.isspace() else c for c in text)
    return MeshIRValueError(f"malformed mesh {text!r} at column {pos + 1}: {what} "
                            f"(e.g. \"x=4, y=2\" or \"x:4;y:2\")\n  {shown}\n  {' ' * pos}^")


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
    `Mesh([("x", 4), ("y", 2)])`, `Mesh("x=4, y=2")`, `Mesh("x:4;y:2")` (Mesh-TensorFlow's
    mesh_shape) or `Mesh(jax_mesh)` (a `jax.sharding.Mesh`: its axes and devices).

    `devices`: the jax devices to run on, a flat sequence in partition order or an array of
    the mesh's shape; partition `p` (the row-major index of mesh coordinates) runs on the
    `p`-th. None: the backend's first `size` devices. Devices are a runtime fact: the IR's
    `sdy.mesh` has none, and two meshes of the same axes and name are equal (and hash alike)
    whatever their devices.

    `axis_types`: jax's type of each axis ("explicit" or "auto"; a jax mesh's own), which a
    "jax" export records so that jax accepts the mesh they came from; None: not stated (Auto).
    Like devices, a runtime fact outside the IR, equality and hashing.
    """

    axes: tuple[tuple[str, int], ...]
    name: str = "mesh"
    devices: tuple | None = field(default=None, compare=False)
    axis_types: tuple[str, ...] | None = field(default=None, compare=False)

    @reports_at_call_site
    def __init__(self, axes, name: str = "mesh", devices=None, axis_types=None):
        # A jax mesh exists only once jax is imported: looked up, not imported (importing jax
        # takes 1 s, and `meshir-opt` builds Meshes from `sdy.mesh` without ever needing it).
        jax = sys.modules.get("jax")
        if jax is not None and isinstance(axes, (jax.sharding.Mesh, jax.sharding.AbstractMesh)):
            if devices is not None and isinstance(axes, jax.sharding.Mesh):
                raise MeshIRValueError("give the devices of a mesh once: in the jax.sharding.Mesh or as devices=, "
                                       "not both")
            if isinstance(axes, jax.sharding.Mesh):
                devices = axes.devices
            if axis_types is None:  # a Manual axis (inside shard_map) is Auto to a program, as before
                axis_types = tuple("explicit" if t.name == "Explicit" else "auto" for t in axes.axis_types)
            axes = tuple(zip(axes.axis_names, axes.axis_sizes))
        items = _axis_items(axes)
        problem = _mesh_problem(items, name)
        if problem is not None:
            raise problem
        object.__setattr__(self, "axes", tuple((a, int(s)) for a, s in items))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "devices", None if devices is None else _mesh_devices(self, devices))
        object.__setattr__(self, "axis_types", None if axis_types is None else _axis_types(self, axis_types))

    def __repr__(self) -> str:
        devices = "" if self.devices is None else f", devices={list(self.devices)!r}"
        types = "" if self.axis_types is None else f", axis_types={self.axis_types!r}"
        return f"Mesh(axes={self.axes!r}, name={self.name!r}{devices}{types})"

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


AXIS_TYPES = ("explicit", "auto")


def _axis_types(mesh: Mesh, axis_types) -> tuple[str, ...]:
    """`axis_types` as lower-case names, one per axis of `mesh` ("Explicit", jax's
    `AxisType.Explicit` and "explicit" alike); MeshIRValueError naming them otherwise."""
    given = (axis_types,) if isinstance(axis_types, str) else tuple(axis_types)
    names = tuple(str(getattr(t, "name", t)).lower() for t in given)
    if len(names) != len(mesh.axes) or any(n not in AXIS_TYPES for n in names):
        raise MeshIRValueError(f"axis_types {given!r} of mesh {mesh}: expected one of {', '.join(AXIS_TYPES)} for "
                               f"each of its {len(mesh.axes)} axes")
    return names


def _mesh_devices(mesh: Mesh, devices) -> tuple:
    """`devices` for `mesh`, flat in partition order, checked: jax devices of one platform,
    none twice, as many as the mesh has (an array: of the mesh's shape)."""
    import jax  # devices given: jax is in use (not at module level: jax is heavy, CLI start-up)

    where = f"devices of mesh {mesh}"
    shape = tuple(s for _, s in mesh.axes)
    if isinstance(devices, np.ndarray):
        if devices.shape != shape and devices.ndim != 1:
            raise MeshIRValueError(f"{where} must be {mesh.size} devices in a flat sequence or an array of shape "
                                   f"{shape}, got an array of shape {devices.shape}")
        flat = list(devices.flat)
    elif isinstance(devices, (str, bytes, dict)) or not hasattr(devices, "__iter__"):
        raise MeshIRTypeError(f"{where} must be a sequence of jax devices or an array of shape {shape}, "
                              f"got {type(devices).__name__} {devices!r}")
    else:
        flat = list(devices)
    for i, d in enumerate(flat):
        if not isinstance(d, jax.Device):
            raise MeshIRTypeError(f"{where}: item {i} is not a jax device, got {type(d).__name__} {d!r}")
    if len(flat) != mesh.size:
        raise MeshIRValueError(f"mesh {mesh} needs {mesh.size} devices, got {len(flat)}: {flat}")
    seen: dict = {}
    for i, d in enumerate(flat):
        if d in seen:
            raise MeshIRValueError(f"{where} list {d!r} twice (items {seen[d]} and {i}); each device runs one partition")
        seen[d] = i
    platforms: dict[str, list] = {}
    for d in flat:
        platforms.setdefault(d.platform, []).append(d)
    if len(platforms) > 1:
        kinds = "; ".join(f"{p}: {ds}" for p, ds in platforms.items())
        raise MeshIRValueError(f"{where} are on several platforms ({kinds}); a mesh runs on one backend")
    return tuple(flat)


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
    if MESH in attrs:
        try:
            ref = ir.FlatSymbolRefAttr(attrs[MESH]).value
        except ValueError:
            raise MeshIRError(f"mtf.mesh must name a mesh symbol like @mesh, got {attrs['mtf.mesh']}") from None
        if ref not in meshes:
            known = ", ".join("@" + n for n in meshes) or "none"
            raise MeshIRError(f"function refers to unknown mesh @{ref} (meshes in module: {known})")
        return meshes[ref]
    if len(meshes) == 1:
        return next(iter(meshes.values()))
    return None
