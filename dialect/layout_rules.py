"""Mesh-TensorFlow layout rules: dim name -> mesh axes, as one typed value.

`LayoutRules` is what Python hands to `mtf-propagate-sharding` (no text in between); text
exists only where users write it: the pass option `rules="batch:x,d_ff:(x,y)"` of
`meshir-opt`, and the text form `mi.compile(..., layout="...")` accepts. One parser reads
every text form the project accepts:

    batch:x,d_ff:(x,y),d_model:()     MeshIR's (a rule's axes: one name, or a tuple in parens)
    batch:x;d_ff:y                    Mesh-TensorFlow's (rules separated by semicolons)

Rules are validated once, in two halves: their form (identifiers, each dim once) when the
value is made, and against a mesh (axes it has, each once per rule) by `problems_on`, which
the propagation pass and `Program(layout=...)` apply. Mesh-TensorFlow's rule sets name axes
most meshes lack (T5's `ensemble:ensemble`): the Python API drops those axes
(`realisable_on`) with a warning unless asked to be strict; the pass and the IR attribute
keep them errors.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from meshir._jax_private import ir
from .attribute_names import LAYOUT_RULES

from .diagnostics import MeshIRValueError
from .mesh import valid_name
from .tensor_type import format_axes

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_AXIS = re.compile(_NAME + r"\Z")
_RULE = re.compile(rf"\s*({_NAME})\s*:\s*(\(\s*\)|\([^)]*\)|{_NAME})\s*([,;]|\Z)")
_SEPARATOR_NAMES = {",": "a comma", ";": "a semicolon"}


@dataclass(frozen=True, eq=False)
class LayoutRules(Mapping):
    """Immutable `{dim name: (mesh axis, ...)}` (compares equal to a dict of the same rules).
    `origin`: where the rules were given (an `ir.Location`, e.g. the user's `mi.compile`
    call), where the pass reports rules its mesh cannot realise; None: at the function."""

    rules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    origin: object = dataclasses.field(default=None, repr=False)

    #: How `meshir-opt --help` names the type of a pass option holding rules.
    OPTION_TYPE_TEXT = "str"

    def __post_init__(self) -> None:
        seen = set()
        for name, axes in self.rules:
            if not valid_name(name):
                raise MeshIRValueError(f"layout rule dim {name!r} is not an identifier")
            if name in seen:
                raise MeshIRValueError(f"layout rules give '{name}' twice")
            seen.add(name)
            if not isinstance(axes, tuple) or not all(valid_name(a) for a in axes):
                raise MeshIRValueError(f"layout rule for '{name}': {axes!r} must be a tuple of mesh axis names")
        object.__setattr__(self, "_index", dict(self.rules))  # lookups are per dim of every value

    # -- making rules ------------------------------------------------------------------------
    @classmethod
    def of(cls, value) -> "LayoutRules":
        """Rules from rules, a mapping `{dim (name or Dim): axis or axes}`, text, or None."""
        if value is None:
            return cls()
        if isinstance(value, LayoutRules):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        return cls(tuple((getattr(dim, "name", dim), (axes,) if isinstance(axes, str) else tuple(axes))
                         for dim, axes in value.items()))

    @classmethod
    def parse(cls, text: str) -> "LayoutRules":
        """Every accepted text form (module docstring); a MeshIRValueError quoting the text and
        the column of the first problem otherwise."""
        rules: dict[str, tuple[str, ...]] = {}
        pos = 0
        text = text.strip()
        while pos < len(text):
            match = _RULE.match(text, pos)
            if not match:
                raise MeshIRValueError(
                    f"malformed layout rules at column {pos + 1} of '{text}': expected 'dim:axis' or 'dim:(axis,...)'"
                )
            name, axes = match.group(1), match.group(2)
            parts = [a.strip() for a in axes.strip("()").split(",")] if axes.strip("() ") else []
            if any(not _AXIS.match(a) for a in parts):
                raise MeshIRValueError(f"malformed layout rules at column {pos + 1} of '{text}': "
                                       f"axes of '{name}' must be mesh axis names, got '{axes}'")
            if match.group(3) and match.end() == len(text):
                raise MeshIRValueError(f"malformed layout rules: '{text}' ends with {_SEPARATOR_NAMES[match.group(3)]}")
            if name in rules:
                raise MeshIRValueError(f"layout rules give '{name}' twice in '{text}'")
            rules[name] = tuple(parts)
            pos = match.end()
        return cls(tuple(rules.items()))

    @classmethod
    def from_option_text(cls, text: str) -> "LayoutRules":
        """The value of a pass option written as text (registry.py)."""
        return cls.parse(text)

    @classmethod
    def from_attribute(cls, fn) -> "LayoutRules":
        """The function's `mtf.layout_rules` (the verifier has checked its shape)."""
        if LAYOUT_RULES not in fn.attributes:
            return cls()
        attr = ir.DictAttr(fn.attributes[LAYOUT_RULES])
        return cls(tuple((attr[i].name, tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attr[i].attr)))
                         for i in range(len(attr))))

    def at(self, origin) -> "LayoutRules":
        """The same rules, given at `origin`."""
        return dataclasses.replace(self, origin=origin)

    def merged(self, more: "LayoutRules") -> "LayoutRules":
        """These rules with `more` added (a rule of `more` replaces one of the same dim)."""
        if not more:
            return self
        return LayoutRules(tuple({**dict(self.rules), **dict(more.rules)}.items()))

    # -- checking ----------------------------------------------------------------------------
    def problems_on(self, mesh, absent_axes: bool = True) -> list[str]:
        """What makes the rules impossible on `mesh` (None: no mesh): unknown axes (unless
        `absent_axes` is False, for rules whose absent axes `realisable_on` drops), an axis
        named twice by one rule."""
        problems = []
        for name, axes in self.rules:
            for a in axes:
                if mesh is None or (absent_axes and a not in mesh.shape):
                    known = mesh.format_axes() if mesh is not None else "no mesh"
                    problems.append(f"layout rule for '{name}' names unknown mesh axis '{a}' ({known})")
            if len(set(axes)) != len(axes):
                problems.append(f"layout rule for '{name}' names a mesh axis twice: {format_axes(axes)}")
        return problems

    def realisable_on(self, mesh) -> tuple["LayoutRules", tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]]:
        """(these rules without the mesh axes `mesh` lacks, what that changed: (dim, axes
        given, axes kept) per rule). Mesh-TensorFlow's reading: a rule is a set of (dim, axis)
        pairs and a pair whose axis the mesh lacks matches nothing, so `d_ff:(x,ensemble)` is
        `d_ff:x` on a mesh without `ensemble`, and a rule left with no axis is no rule (not
        `dim:()`, which would replicate the dim). Keeps `origin`."""
        kept, changed = [], []
        for name, axes in self.rules:
            present = tuple(a for a in axes if a in mesh.shape)
            if present != axes:
                changed.append((name, axes, present))
            if present or not axes:
                kept.append((name, present))
        if not changed:
            return self, ()
        return LayoutRules(tuple(kept), self.origin), tuple(changed)

    # -- Mapping and text ----------------------------------------------------------------------
    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self._index[name]

    def get(self, name: str, default=None):
        return self._index.get(name, default)

    def __iter__(self):
        return (n for n, _ in self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __hash__(self) -> int:
        return hash(self.rules)

    def __str__(self) -> str:
        """The pass-option text (`parse` reads it back)."""
        return ",".join(f"{n}:{a[0] if len(a) == 1 else '(' + ','.join(a) + ')'}" for n, a in self.rules)

    def __repr__(self) -> str:
        return f"LayoutRules({str(self)!r})"
