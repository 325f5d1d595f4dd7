"""Checks of what users pass to the API, one helper per kind of argument.

Every public function checks its arguments with these before using them, so a wrong value
is a MeshIRError located at the user's call that names the value — never a TypeError or
AttributeError from deep inside. Wrong kinds of object raise MeshIRTypeError, wrong values
of the right kind MeshIRValueError (both also the builtins Python code catches).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from meshir.dialect import Mesh, MeshIRError, MeshIRTypeError, MeshIRValueError, get_context
from meshir.dialect.call_site import warn_at_call_site
from meshir.dialect.element_types import element_type_name
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.mesh import function_mesh, module_meshes, valid_name
from meshir.dialect.signature import defined_functions
from meshir.dialect.tensor_type import format_axes
from meshir.transforms.analysis.cost_model import BYTES, CostModel
from meshir.transforms.analysis.memory_estimate import parse_bytes

from meshir.api.programs.dims import Dim
from meshir.api.programs._locations import call_site_location, located_error
from meshir.api.programs.tensor import Tensor


def describe(value) -> str:
    """A short text naming `value` in a message: its type and (shortened) repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _type_error(what: str, expected: str, value) -> MeshIRError:
    return located_error(f"{what} must be {expected}, got {describe(value)}", MeshIRTypeError)


def tensor(x, what: str):
    """`x` if it is a Tensor."""
    if not isinstance(x, Tensor):
        raise _type_error(what, "a MeshIR Tensor", x)
    return x


def optional_tensor(x, what: str):
    return None if x is None else tensor(x, what)


def sequence(xs, what: str) -> list:
    """A list of the items of a list, tuple or other non-text, non-mapping iterable."""
    if isinstance(xs, (str, bytes, dict, Tensor)) or not hasattr(xs, "__iter__"):
        raise _type_error(what, "a list or tuple", xs)
    return list(xs)


def tensors(xs, what: str) -> list:
    items = sequence(xs, what)
    return [tensor(x, f"{what}[{i}]") for i, x in enumerate(items)]


def integer(x, what: str, minimum: int | None = None) -> int:
    """`x` as an int (Python or NumPy integers; not bools, not floats)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        raise _type_error(what, "an integer", x)
    x = int(x)
    if not -(2**63) <= x < 2**63:
        raise located_error(f"{what} must fit in 64 bits, got {x}", MeshIRValueError)
    if minimum is not None and x < minimum:
        raise located_error(f"{what} must be at least {minimum}, got {x}", MeshIRValueError)
    return x


def real(x, what: str, finite: bool = True, minimum: float | None = None, below: float | None = None) -> float:
    """`x` as a float (a Python or NumPy real number, not a bool); finite unless told; in
    [minimum, below) when given."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.integer, np.floating)):
        raise _type_error(what, "a real number", x)
    given = x
    try:
        value = float(x)
    except OverflowError:
        raise located_error(f"{what} must be a finite number, got {describe(x)}", MeshIRValueError) from None
    if finite and not math.isfinite(value):
        raise located_error(f"{what} must be a finite number, got {given!r}", MeshIRValueError)
    if minimum is not None and not value >= minimum:
        raise located_error(f"{what} must be at least {minimum}, got {given!r}", MeshIRValueError)
    if below is not None and not value < below:
        raise located_error(f"{what} must be below {below}, got {given!r}", MeshIRValueError)
    return value


def flag(x, what: str) -> bool:
    if not isinstance(x, (bool, np.bool_)):
        raise _type_error(what, "True or False", x)
    return bool(x)


def identifier(x, what: str) -> str:
    """`x` if it is a string that is an identifier ([A-Za-z_][A-Za-z0-9_]*)."""
    if not isinstance(x, str):
        raise _type_error(what, "a name (str)", x)
    if not valid_name(x):
        raise located_error(f"{what} {x!r} is not an identifier", MeshIRValueError)
    return x


def optional_identifier(x, what: str) -> str | None:
    return None if x is None else identifier(x, what)


def choice(x, choices, what: str) -> str:
    if not isinstance(x, str):
        raise _type_error(what, f"one of {', '.join(map(repr, choices))}", x)
    if x not in choices:
        raise located_error(f"unknown {what} {x!r} (expected one of {', '.join(choices)})", MeshIRValueError)
    return x


def dim_name(x, t, what: str) -> str:
    """The name of a dim of the Tensor `t`, given by name or as a Dim."""
    name = x.name if isinstance(x, Dim) else x  # (not any object with a .name: a NumPy dtype has one)
    if not isinstance(name, str):
        raise _type_error(what, "a dimension name or Dim", x)
    if name not in t.names:
        raise located_error(f"{what}: '{name}' is not a dimension of {t.type}", MeshIRValueError)
    return name


def dim_key(x, what: str) -> str:
    """A dimension name given as a str or a Dim (for the keys of layouts and renames)."""
    name = x.name if isinstance(x, Dim) else x
    if not isinstance(name, str):
        raise _type_error(what, "a dimension name or Dim", x)
    return identifier(name, what)


def axes(x, what: str) -> tuple[str, ...]:
    """Mesh axes: one axis name or a list/tuple of them (`()`: none)."""
    items = (x,) if isinstance(x, str) else x
    if not isinstance(items, (tuple, list)):
        raise _type_error(what, "a mesh axis name or a tuple of them", x)
    for a in items:
        if not isinstance(a, str):
            raise _type_error(f"{what}: each mesh axis", "a name (str)", a)
        identifier(a, f"{what}: mesh axis")
    return tuple(items)


def layout(x, what: str, allow_free: bool = False, optional: bool = True) -> dict:
    """`{dim: axes}` (dims by name or Dim; axes a name or a tuple of names; with
    `allow_free`, None leaves a dim free), `LayoutRules`, or rules text in any form
    `LayoutRules.parse` reads (`"batch:x,d_ff:(x,y)"`, Mesh-TensorFlow's `"batch:x;d_ff:y"`),
    as `{name: tuple or None}`; `None` is `{}` when the layout is `optional`."""
    if x is None and optional:
        return {}
    if isinstance(x, LayoutRules):
        return dict(x)
    if isinstance(x, str):
        try:
            return dict(LayoutRules.parse(x))
        except MeshIRError as e:
            raise located_error(f"{what} {x!r}: {e}", MeshIRValueError) from None
    if not isinstance(x, dict):
        raise _type_error(what, "a dict {dim: mesh axis or axes}", x)
    out = {}
    for key, value in x.items():
        name = dim_key(key, f"{what}: a key")
        if value is None and allow_free:
            out[name] = None
        else:
            out[name] = axes(value, f"{what}: the value for '{name}'")
    return out


def layout_rules(x, what: str = "layout rules") -> LayoutRules:
    """Mesh-TensorFlow layout rules as the typed value passes take: from `LayoutRules`, a
    dict `{dim: axes}` or rules text (see `layout`); `None` is no rules. Their form is checked
    here, located at the user's call; the mesh is checked by the pass that applies them,
    which reports a problem at the user's call too (`origin`)."""
    rules = x if isinstance(x, LayoutRules) else LayoutRules.of(layout(x, what))
    if not rules or rules.origin is not None:
        return rules
    with get_context():
        return rules.at(call_site_location())


def rules(x, meshes, what: str = "layout rules", strict: bool = False) -> LayoutRules:
    """Layout rules whose axes exist, each once, on every mesh in `meshes` (None: no mesh),
    for `Program(layout=...)`: checked here, in the words of the propagation pass
    (`LayoutRules.problems_on`), so that the error points at the call that gave them. Axes a
    mesh lacks are dropped with a warning, or with `strict` an error (`rules_on_mesh`); rules
    given without a mesh stay an error either way."""
    strict = flag(strict, "strict")
    out = layout_rules(x, what)
    for mesh in meshes:
        problems = out.problems_on(mesh) if strict or mesh is None else []
        if problems:
            raise located_error(problems[0], MeshIRValueError)
        out = rules_on_mesh(out, mesh, strict)
    return out


def rules_on_mesh(rules: LayoutRules, mesh, strict: bool = False) -> LayoutRules:
    """`rules` as `mesh` can realise them, for an entry point that hands them to the passes.

    Mesh-TensorFlow's rule sets name axes most meshes lack (T5's `ensemble:ensemble`), and
    Mesh-TensorFlow ignored those: so are they here, axis by axis (`LayoutRules.realisable_on`),
    with one MeshIRWarning at the user's call naming each rule changed and the mesh's axes.
    With `strict`, or without a mesh, the rules are unchanged and the propagation pass
    reports such an axis as an error, as before (it catches typos), at the user's call. Other
    problems (an axis named twice by one rule) are errors either way."""
    strict = flag(strict, "strict")
    if strict or mesh is None or not rules:
        return rules
    problems = rules.problems_on(mesh, absent_axes=False)
    if problems:
        raise located_error(problems[0], MeshIRValueError)
    kept, changed = rules.realisable_on(mesh)
    if changed:
        parts = [f"{name}:{format_axes(given)} is " + (f"applied as {name}:{format_axes(left)}" if left else "ignored")
                 for name, given, left in changed]
        absent = sorted({a for _, given, _ in changed for a in given if a not in mesh.shape})
        axes = f"mesh axis '{absent[0]}'" if len(absent) == 1 else f"mesh axes {', '.join(map(repr, absent))}"
        warn_at_call_site(f"layout rules name {axes}, which the mesh {mesh.format_axes()} lacks: {'; '.join(parts)} "
                          "(as in Mesh-TensorFlow; strict=True makes this an error)")
    return kept


def rules_for_module(rules: LayoutRules, module, strict: bool = False) -> LayoutRules:
    """`rules_on_mesh` for a module's functions, on their mesh when they have one (several
    meshes: the rules are unchanged, and the pass checks them on each)."""
    meshes = module_meshes(module.operation)
    found = {m.axes: m for m in (function_mesh(fn, meshes) for fn in defined_functions(module)) if m is not None}
    return rules_on_mesh(rules, next(iter(found.values())) if len(found) == 1 else None, strict)


def element_type(x, what: str) -> str:
    """MeshIR's element type name for a name or NumPy dtype (see dialect/element_types.py)."""
    try:
        return element_type_name(x)
    except MeshIRError as e:
        raise located_error(f"{what}: {e}", type(e)) from None


def mesh(x, what: str = "mesh") -> Mesh | None:
    """A Mesh from a Mesh, a dict, (axis, size) pairs, "x=4,y=2", "x:4;y:2" or a
    jax.sharding.Mesh (with its devices); None stays None."""
    if x is None or isinstance(x, Mesh):
        return x
    return Mesh(x)  # its errors are located at the user's call already


def program_mesh(program) -> Mesh | None:
    """The mesh the user gave the program (`mi.Program(name, mesh)`; a gradient program's or
    training step's is its source program's), with its devices if it has any; None for a
    module."""
    given = getattr(program, "mesh", None)
    return given if isinstance(given, Mesh) else None


def on_users_devices(run_mesh: Mesh, given: Mesh | None, program) -> Mesh:
    """`run_mesh` (the mesh the IR declares for the entry) on the devices the user chose:
    those of `given` (compile's `mesh=`) when it has some, else those of the mesh the program
    was built on; unchanged when neither has devices (the backend's first ones). Its jax axis
    types (which exports record) come the same way."""
    sources = [s for s in (given, program_mesh(program)) if s is not None and s.axes == run_mesh.axes]
    devices = next((s.devices for s in sources if s.devices is not None), None)
    axis_types = next((s.axis_types for s in sources if s.axis_types is not None), None)
    if devices is None and axis_types is None:
        return run_mesh
    return Mesh(run_mesh.axes, run_mesh.name, devices=devices, axis_types=axis_types)


def cost_model(x, what: str = "cost_model"):
    """The reshard planner's cost model: a mi.CostModel, or None for bytes per device."""
    if x is None:
        return BYTES
    if not isinstance(x, CostModel):
        raise _type_error(what, "a mi.CostModel (or None)", x)
    return x


def module_of(obj, what: str):
    """The MLIR module of a Program, GradientProgram, TrainStep or module."""
    module = getattr(obj, "module", obj)
    if not hasattr(module, "operation") or not hasattr(module.operation, "regions"):
        raise _type_error(what, "a Program, a gradient or training program, or an MLIR module", obj)
    return module


def optional_name(x, what: str) -> str | None:
    """An optional name that need not be an identifier (function and result names)."""
    if x is not None and not isinstance(x, str):
        raise _type_error(what, "a name (str) or None", x)
    if x == "":
        raise located_error(f"{what} must be a name or None, got ''", MeshIRValueError)
    return x


#: Units of a memory budget: decimal (kB, MB, GB, TB) and binary (KiB, MiB, GiB, TiB).
def memory_budget(x, what: str = "memory_budget") -> int | None:
    """Bytes per device: an int, or text such as "16GiB", "512MiB", "1.5GB" (binary and
    decimal units); None is no budget."""
    if x is None:
        return None
    if isinstance(x, str):
        try:
            return parse_bytes(x, what)
        except MeshIRValueError as e:
            raise located_error(str(e), MeshIRValueError) from None
    return integer(x, what, minimum=0)
